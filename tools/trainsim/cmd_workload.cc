// trainsim workload SCENARIO: builds the per-rank operation graphs of one iteration; prints a
// summary per rank class, checks their invariants, or dumps them as JSON (sim/workload/json.h).
#include <iostream>
#include <memory>
#include <optional>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "sim/common/atomic_file.h"
#include "sim/common/interrupt.h"
#include "sim/workload/builder.h"
#include "sim/workload/errors.h"
#include "sim/workload/json.h"
#include "sim/workload/summary.h"
#include "sim/workload/validate.h"
#include "tools/trainsim/cli.h"

namespace trainsim::cli {
namespace {

struct WorkloadArgs {
  ScenarioArgs scenario;
  std::filesystem::path dump;
  std::optional<int64_t> rank;
  bool check = false;
};

int run(const WorkloadArgs& args, const Context& context) {
  const InterruptGuard interrupt_guard(
      "trainsim workload",
      fmt::format("{}rerun: {}",
                  args.dump.empty() ? "" : fmt::format("{} was not written; ", args.dump.string()),
                  context.command_line));
  const config::Scenario s = args.scenario.load();
  // Created first, so an unwritable destination fails before the graphs are built.
  std::optional<AtomicFile> dump_file;
  if (!open_output(args.dump, "--dump", dump_file)) return kExitUsage;
  const workload::ParallelPlan plan = workload::make_plan(s);
  std::vector<workload::Graph> graphs;
  if (args.rank) {
    if (*args.rank < 0 || *args.rank >= plan.world_size()) {
      spdlog::error("--rank {} is outside 0..{}", *args.rank, plan.world_size() - 1);
      return kExitUsage;
    }
    graphs.push_back(workload::build_rank_graph(s, plan, *args.rank));
  } else {
    graphs = workload::build_class_graphs(s, plan);
  }
  if (args.check) {
    std::vector<std::string> problems;
    for (const workload::Graph& g : graphs) {
      for (std::string& p : workload::check_graph(plan, g)) problems.push_back(std::move(p));
    }
    if (!args.rank) {
      for (std::string& p : workload::check_class_matching(plan, graphs)) problems.push_back(std::move(p));
    }
    for (const std::string& p : problems) spdlog::error("invariant: {}", p);
    if (!problems.empty()) return kExitInternal;
    spdlog::info("{} graph(s) pass the invariants", graphs.size());
  }
  if (!args.dump.empty()) {
    nlohmann::json j;
    j["schema_version"] = 1;
    j["scenario"] = s.name;
    j["world_size"] = plan.world_size();
    j["plan"] = {{"tp", plan.degree(workload::Axis::kTp)},
                 {"sp", plan.degree(workload::Axis::kSp)},
                 {"dp", plan.degree(workload::Axis::kDp)},
                 {"pp", plan.degree(workload::Axis::kPp)},
                 {"order", s.parallelism.order}};
    nlohmann::json classes = nlohmann::json::array();
    for (const workload::SymmetryClass& c : plan.symmetry_classes()) {
      classes.push_back(
          {{"class", c.id}, {"stage", c.stage}, {"representative", c.representative}, {"ranks", c.size}});
    }
    j["classes"] = classes;
    nlohmann::json dumped = nlohmann::json::array();
    for (const workload::Graph& g : graphs) dumped.push_back(workload::to_json(g, plan));
    j["graphs"] = dumped;
    dump_file->stream() << j.dump(1) << '\n';
    dump_file->commit();
  }
  std::cout << fmt::format("# {}: {} ranks, {} rank classes\n", s.name, plan.world_size(),
                           plan.symmetry_classes().size());
  std::cout << fmt::format("{:<6} {:>8} {:>10} {:>10} {:>14} {:>14} {:>12}\n", "# rank", "class", "ops",
                           "edges", "model FLOPs", "exec FLOPs", "peak HBM GiB");
  for (const workload::Graph& g : graphs) {
    const workload::FlopTotals f = workload::flop_totals(g);
    std::cout << fmt::format("{:<6} {:>8} {:>10} {:>10} {:>14.6g} {:>14.6g} {:>12.3f}\n", g.info.rank,
                             g.info.symmetry_class, g.size(), g.edge_count(), f.model, f.executed,
                             workload::memory_timeline(g).peak_hbm_bytes / (1024.0 * 1024 * 1024));
  }
  if (!args.dump.empty()) std::cout << fmt::format("# graphs written to {}\n", args.dump.string());
  return kExitOk;
}

}  // namespace

void register_workload(CLI::App& app, Context& context) {
  auto args = std::make_shared<WorkloadArgs>();
  CLI::App* cmd =
      app.add_subcommand("workload", "Build the per-rank operation graphs of one training iteration");
  args->scenario.add_to(cmd);
  cmd->add_option("--dump", args->dump, "Write the graphs as JSON to FILE")->type_name("FILE");
  cmd->add_option("--rank", args->rank, "Build this rank's graph instead of one per rank class");
  cmd->add_flag("--check", args->check, "Check the graphs' invariants (exit 70 if one fails)");
  cmd->footer(
      "One graph per rank class (one representative per pipeline stage) unless --rank is given.\n"
      "Exits 4 when the parallel plan cannot be expressed.");
  cmd->callback([args, &context] {
    try {
      context.exit_code = run(*args, context);
    } catch (const workload::PlanError& e) {
      spdlog::error("{}: {}", args->scenario.file.string(), e.what());
      context.exit_code = kExitInfeasible;
    }
  });
}

}  // namespace trainsim::cli
