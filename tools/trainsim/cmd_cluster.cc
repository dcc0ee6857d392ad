// trainsim cluster FILE: several jobs on one cluster at once; each job's iteration time alone on
// its nodes and with the others running, and what slowed it down.
#include <iostream>
#include <optional>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "sim/cluster/cluster_file.h"
#include "sim/cluster/report.h"
#include "sim/cluster/runner.h"
#include "sim/common/atomic_file.h"
#include "sim/common/interrupt.h"
#include "tools/trainsim/cli.h"

namespace trainsim::cli {
namespace {

struct ClusterArgs {
  std::filesystem::path file;
  std::vector<std::string> overrides;
  std::string format = "table";
  int iterations = 2;
  bool collapsed = false;
  std::string network = "simgrid";
  int jobs = 1;
  double time_limit_s = 0;
  bool ignore_memory = false;
  std::string trace;
  size_t links = 0;
};

int run(const ClusterArgs& args, const Context& context) {
  const InterruptGuard interrupt_guard(
      "trainsim cluster",
      fmt::format("{}; rerun: {}",
                  args.trace.empty() ? "nothing was written"
                                     : fmt::format("the trace {} was not written", args.trace),
                  context.command_line));
  std::vector<config::Override> overrides;
  for (const std::string& text : args.overrides) overrides.push_back(config::parse_override(text));
  if (args.links > 0 && args.network == "ideal") {
    spdlog::error("--links: the ideal network model has no links; use --network simgrid");
    return kExitUsage;
  }
  const cluster::ClusterFile file = cluster::load_cluster(args.file, overrides);
  cluster::ClusterRunOptions options;
  options.run.engine.full = !args.collapsed;
  options.run.engine.mirror = engine::MirrorMode::kCoupled;
  options.run.engine.iterations = args.iterations;
  options.run.engine.time_limit_s = args.time_limit_s;
  options.run.network = engine::network_model(args.network);
  options.run.busiest_links = args.links;
  options.parallel = args.jobs;
  options.command_line = context.command_line;
  // The trace's temporary file exists from the start, so an unwritable destination fails before the
  // simulations; the run of every job together writes it, and it is renamed into place once complete.
  std::optional<AtomicFile> trace_file;
  if (!open_output(args.trace, "--trace", trace_file)) return kExitUsage;
  if (trace_file) options.trace_path = trace_file->temporary();
  spdlog::info("simulating {} jobs on {} ({} nodes), each alone and all together", file.jobs.size(),
               file.topology.name, file.topology.fabric.nodes);
  cluster::ClusterRuns runs;
  try {
    runs = cluster::run_cluster(file, options);
  } catch (const cluster::ClusterRunError& e) {
    switch (e.kind()) {
      case cluster::ClusterRunError::Kind::kPlan:
        spdlog::error("{}", e.what());
        return kExitInfeasible;
      case cluster::ClusterRunError::Kind::kBudget:
        spdlog::error(
            "{}; nothing was reported. Raise --time-limit, or simulate less (fewer --iterations, "
            "--collapsed, --network ideal)",
            e.what());
        return kExitBudget;
      case cluster::ClusterRunError::Kind::kDeadlock:
      case cluster::ClusterRunError::Kind::kFailed:
        spdlog::critical("internal error: {}", e.what());
        return kExitInternal;
    }
  }
  const cluster::ClusterReport report = cluster::make_cluster_report(
      file, runs, {context.command_line, args.network, !args.collapsed, args.iterations});
  print_result(args.format, {[&] { return json_text(to_json(report)); },
                             [&] { return cluster::render_cluster_table(report); }});
  if (trace_file) {
    trace_file->commit();
    spdlog::info("wrote {} trace events to {}", runs.trace_events, args.trace);
  }
  return fit_exit_code(cluster::cluster_infeasibility(report), args.ignore_memory);
}

}  // namespace

void register_cluster(CLI::App& app, Context& context) {
  auto args = std::make_shared<ClusterArgs>();
  CLI::App* cmd = app.add_subcommand(
      "cluster", "Simulate several jobs sharing one cluster: each alone and all together, and the slowdowns");
  cmd->add_option("FILE", args->file, "Cluster file (topology, hardware profile, jobs)")->required();
  cmd->add_option("--set", args->overrides,
                  "Override a key of the cluster file: --set placement=random --set seed=2 (repeatable)")
      ->type_name("KEY=VALUE");
  add_format_option(cmd, args->format, false);
  cmd->add_option("--iterations", args->iterations,
                  "Iterations every job runs with all the others running (jobs that get there first keep "
                  "going until every job has)")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  cmd->add_flag("--collapsed", args->collapsed,
                "Simulate one rank per symmetry class instead of every rank, every rank's traffic still "
                "on the network (faster; each pipeline stage moves at its slowest GPU's pace)");
  cmd->add_option("--network", args->network,
                  "Network model: simgrid (shared links, congestion) or ideal (contention-free: no job slows "
                  "another)")
      ->check(CLI::IsMember({"simgrid", "ideal"}))
      ->capture_default_str();
  add_jobs_option(cmd, args->jobs, "Simulations (the shared run and each job alone)");
  cmd->add_option(
         "--time-limit", args->time_limit_s,
         "Stop (exit 5) a simulation that runs longer than this many seconds of wall-clock time; 0 = "
         "no limit")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->add_option("--links", args->links,
                  "Report the load of every link with all the jobs running, by tier, and the N busiest "
                  "link directions with each job's share")
      ->check(CLI::Range(size_t{1}, size_t{100000}));
  cmd->add_flag("--ignore-memory", args->ignore_memory, "Report jobs that do not fit instead of exiting 4");
  cmd->add_option("--trace", args->trace,
                  "Write a Chrome trace (Perfetto) of every job running together to this file: a process per "
                  "node, named with its job");
  cmd->footer(
      "Each job runs on whole nodes of its own as on a cluster of its own; the jobs share the fabric's links "
      "above "
      "the NICs (leaf uplinks, spine). Exits 3 on an invalid file, 4 if a job does not fit, 5 on "
      "--time-limit.");
  cmd->callback([args, &context] { context.exit_code = run(*args, context); });
}

}  // namespace trainsim::cli
