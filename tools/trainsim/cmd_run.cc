// trainsim run SCENARIO: simulates training iterations and reports time, throughput, MFU, the
// breakdown, memory feasibility and the communication log.
#include <fstream>
#include <iostream>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "sim/engine/scenario_run.h"
#include "sim/report/run_report.h"
#include "sim/report/trace.h"
#include "sim/workload/errors.h"
#include "tools/trainsim/cli.h"

namespace trainsim::cli {
namespace {

struct RunArgs {
  ScenarioArgs scenario;
  std::string format = "table";
  bool full = false;
  int iterations = 1;
  std::string network = "simgrid";
  std::string trace;
  std::vector<int64_t> trace_ranks;
  bool ignore_memory = false;
};

int run(const RunArgs& args, const Context& context) {
  const config::Scenario s = args.scenario.load();
  engine::RunOptions options;
  options.engine.full = args.full;
  options.engine.iterations = args.iterations;
  options.network = args.network == "ideal" ? engine::NetworkModel::kIdeal : engine::NetworkModel::kSimgrid;
  spdlog::info("simulating {} on {} GPUs ({} ranks)", s.name, s.cluster.gpus,
               args.full ? "every" : "one per symmetry class of");
  std::unique_ptr<engine::ScenarioRun> result;
  try {
    result = engine::run_scenario(s, options);
  } catch (const workload::PlanError& e) {
    spdlog::error("{}: {}", e.setting(), e.what());
    return kExitInfeasible;
  }
  spdlog::info("simulated {} ops of {} ranks in {:.2f} s wall ({:.0f} ops/s)", result->result.ops_executed,
               result->ranks.size(), result->wall_s,
               static_cast<double>(result->result.ops_executed) / std::max(result->wall_s, 1e-9));
  const nlohmann::json report =
      report::make_run_report(s, *result, {context.command_line, args.network, args.full, args.iterations});
  if (args.format == "json") {
    std::cout << report.dump(2) << '\n';
  } else if (args.format == "csv") {
    std::cout << report::render_csv(report);
  } else {
    std::cout << report::render_table(report);
  }
  if (!args.trace.empty()) {
    report::TraceOptions trace_options;
    trace_options.ranks.insert(args.trace_ranks.begin(), args.trace_ranks.end());
    const std::string partial = args.trace + ".partial";
    size_t events = 0;
    {
      std::ofstream out(partial);
      events = report::write_chrome_trace(s, *result, trace_options, out);
      if (!out) throw std::runtime_error("cannot write " + partial);
    }
    std::filesystem::rename(partial, args.trace);
    spdlog::info("wrote {} trace events to {}", events, args.trace);
    if (events > 2'000'000) {
      spdlog::warn(
          "the trace has {} events; Perfetto struggles above a few million (narrow it with --trace-ranks)",
          events);
    }
  }
  const std::string why = report::infeasibility(report);
  if (!why.empty()) {
    if (args.ignore_memory) {
      spdlog::warn("the plan does not fit: {} (ignored: --ignore-memory)", why);
    } else {
      spdlog::error("infeasible plan: {}", why);
      return kExitInfeasible;
    }
  }
  return kExitOk;
}

}  // namespace

void register_run(CLI::App& app, Context& context) {
  auto args = std::make_shared<RunArgs>();
  CLI::App* cmd = app.add_subcommand("run", "Simulate training iterations of a scenario");
  args->scenario.add_to(cmd);
  cmd->add_option("--format", args->format, "Output format")
      ->check(CLI::IsMember({"table", "json", "csv"}))
      ->capture_default_str();
  cmd->add_flag("--full", args->full, "Simulate every rank instead of one per symmetry class");
  cmd->add_option("--iterations", args->iterations, "Training iterations to simulate")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  cmd->add_option("--network", args->network,
                  "Network model: simgrid (topology, algorithms, congestion) or ideal (contention-free "
                  "alpha-beta per tier, for fast screening)")
      ->check(CLI::IsMember({"simgrid", "ideal"}))
      ->capture_default_str();
  cmd->add_option("--trace", args->trace, "Write a Chrome trace (Perfetto) to this file");
  cmd->add_option("--trace-ranks", args->trace_ranks, "Only these ranks in the trace")->delimiter(',');
  cmd->add_flag("--ignore-memory", args->ignore_memory,
                "Report a plan that does not fit instead of exiting 4");
  cmd->callback([args, &context] { context.exit_code = run(*args, context); });
}

}  // namespace trainsim::cli
