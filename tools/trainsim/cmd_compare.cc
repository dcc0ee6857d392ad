// trainsim compare SCENARIO --trace FILE: a simulated training step beside one measured with the
// PyTorch profiler on real GPUs (sim/report/compare.h).
#include <iostream>
#include <optional>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "sim/common/interrupt.h"
#include "sim/engine/scenario_run.h"
#include "sim/measured/kineto_trace.h"
#include "sim/report/compare.h"
#include "sim/report/run_report.h"
#include "sim/workload/errors.h"
#include "sim/workload/plan.h"
#include "tools/trainsim/cli.h"

namespace trainsim::cli {
namespace {

struct CompareArgs {
  ScenarioArgs scenario;
  std::string trace;
  std::optional<int64_t> rank;
  std::optional<int64_t> device;
  int64_t skip_steps = 0;
  int iterations = 2;
  std::string network = "simgrid";
  std::string format = "table";
  size_t kernels = 10;
};

int compare(const CompareArgs& args, const Context& context) {
  const InterruptGuard interrupt_guard("trainsim compare",
                                       fmt::format("nothing was written; rerun: {}", context.command_line));
  const config::Scenario s = args.scenario.load();
  // The trace first: a wrong file should not cost a simulation.
  const measured::MeasuredTrace trace =
      measured::read_kineto_trace(args.trace, {args.device, args.skip_steps});
  const int64_t rank = args.rank.value_or(trace.rank.value_or(0));
  engine::RunOptions options;
  options.engine.iterations = args.iterations;
  options.network = engine::network_model(args.network);
  std::unique_ptr<engine::ScenarioRun> run;
  try {
    const workload::ParallelPlan plan = workload::make_plan(s);
    if (rank < 0 || rank >= plan.world_size()) {
      spdlog::error("--rank: rank {} is not in this plan of {} GPUs{}", rank, plan.world_size(),
                    args.rank ? "" : " (the trace's distributedInfo names it; pass --rank)");
      return kExitUsage;
    }
    spdlog::info("simulating {} on {} GPUs to compare rank {} with {} measured step(s)", s.name,
                 s.cluster.gpus, rank, trace.steps.size());
    run = engine::run_scenario(s, options);
  } catch (const workload::PlanError& e) {
    spdlog::error("{}: {}", e.setting(), e.what());
    return kExitInfeasible;
  }
  const nlohmann::json run_report =
      report::make_run_report(s, *run, {context.command_line, args.network, false, args.iterations});
  const nlohmann::json report = report::make_compare_report(
      s, *run, run_report, trace,
      {args.trace, rank, context.command_line, args.network, args.iterations, args.kernels});
  std::cout << (args.format == "json" ? report.dump(2) + "\n" : report::render_compare_table(report));
  return kExitOk;
}

}  // namespace

void register_compare(CLI::App& app, Context& context) {
  auto args = std::make_shared<CompareArgs>();
  CLI::App* cmd = app.add_subcommand(
      "compare", "Compare a simulated training step with one measured by the PyTorch profiler on real GPUs");
  args->scenario.add_to(cmd);
  cmd->add_option(
         "--trace", args->trace,
         "PyTorch profiler trace (Chrome JSON: prof.export_chrome_trace) of the same training on one rank; "
         "prof.step() marks each iteration")
      ->required();
  cmd->add_option("--rank", args->rank,
                  "The plan's rank the trace was taken on (default: the trace's "
                  "distributedInfo, else 0)");
  cmd->add_option("--device", args->device, "The trace's GPU to read (default: the busiest)");
  cmd->add_option("--skip-steps", args->skip_steps, "Leading profiled steps to leave out")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->add_option("--iterations", args->iterations,
                  "Training iterations to simulate; the last is compared (a profiled step is one of many)")
      ->check(CLI::Range(1, 100))
      ->capture_default_str();
  cmd->add_option("--network", args->network, "Network model: simgrid or ideal")
      ->check(CLI::IsMember({"simgrid", "ideal"}))
      ->capture_default_str();
  cmd->add_option("--kernels", args->kernels, "List the N measured kernels that took longest (0: none)")
      ->capture_default_str();
  cmd->add_option("--format", args->format, "Output format")
      ->check(CLI::IsMember({"table", "json"}))
      ->capture_default_str();
  cmd->callback([args, &context] { context.exit_code = compare(*args, context); });
}

}  // namespace trainsim::cli
