// trainsim compare SCENARIO --trace FILE...: simulated training steps beside those measured with the
// PyTorch profiler on real GPUs, one rank per trace (sim/report/compare.h).
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <optional>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "sim/common/interrupt.h"
#include "sim/config/diagnostics.h"
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
  std::vector<std::filesystem::path> traces;
  std::optional<int64_t> rank;
  std::optional<int64_t> device;
  int64_t skip_steps = 0;
  int iterations = 2;
  std::string network = "simgrid";
  std::string format = "table";
  size_t kernels = 10;
};

// The trace files of --trace: files as given, a folder's *.json in name order.
std::vector<std::filesystem::path> trace_files(const std::vector<std::filesystem::path>& given) {
  std::vector<std::filesystem::path> out;
  for (const std::filesystem::path& p : given) {
    if (!std::filesystem::is_directory(p)) {
      out.push_back(p);
      continue;
    }
    std::vector<std::filesystem::path> inside;
    for (const auto& entry : std::filesystem::directory_iterator(p)) {
      if (entry.is_regular_file() && entry.path().extension() == ".json") inside.push_back(entry.path());
    }
    if (inside.empty()) {
      config::throw_config_error({config::display_name(p)}, "", "the folder holds no trace (*.json)");
    }
    std::sort(inside.begin(), inside.end());
    out.insert(out.end(), inside.begin(), inside.end());
  }
  return out;
}

// Reads `files` and says which rank each was taken on: --rank for a single trace, else its own
// distributedInfo (required when there are several, and distinct), else 0.
std::vector<int64_t> read_traces(const std::vector<std::filesystem::path>& files, const CompareArgs& args,
                                 std::vector<measured::MeasuredTrace>& traces) {
  std::vector<int64_t> ranks;
  for (const std::filesystem::path& file : files) {
    traces.push_back(measured::read_kineto_trace(file, {args.device, args.skip_steps}));
    const std::optional<int64_t> own = traces.back().rank;
    if (files.size() > 1 && !own) {
      config::throw_config_error(
          {config::display_name(file)}, "distributedInfo.rank",
          "the trace does not say its rank; with several traces each must (PyTorch records it "
          "for a torch.distributed job), or compare them one at a time with --rank");
    }
    const int64_t rank = args.rank.value_or(own.value_or(0));
    if (std::find(ranks.begin(), ranks.end(), rank) != ranks.end()) {
      config::throw_config_error({config::display_name(file)}, "distributedInfo.rank",
                                 fmt::format("rank {} has another trace already", rank));
    }
    ranks.push_back(rank);
  }
  return ranks;
}

int compare(const CompareArgs& args, const Context& context) {
  const InterruptGuard interrupt_guard("trainsim compare",
                                       fmt::format("nothing was written; rerun: {}", context.command_line));
  const config::Scenario s = args.scenario.load();
  const std::vector<std::filesystem::path> files = trace_files(args.traces);
  if (files.size() > 1 && args.rank) {
    spdlog::error("--rank: {} traces are given; each names its own rank (distributedInfo)", files.size());
    return kExitUsage;
  }
  // The traces first: a wrong file should not cost a simulation.
  std::vector<measured::MeasuredTrace> traces;
  const std::vector<int64_t> ranks = read_traces(files, args, traces);
  engine::RunOptions options;
  options.engine.iterations = args.iterations;
  options.network = engine::network_model(args.network);
  std::unique_ptr<engine::ScenarioRun> run;
  try {
    const workload::ParallelPlan plan = workload::make_plan(s);
    for (const int64_t rank : ranks) {
      if (rank < 0 || rank >= plan.world_size()) {
        spdlog::error("--rank: rank {} is not in this plan of {} GPUs{}", rank, plan.world_size(),
                      args.rank ? "" : " (a trace's distributedInfo names it: is it this scenario's job?)");
        return kExitUsage;
      }
    }
    spdlog::info("simulating {} on {} GPUs to compare {} rank(s) with their measured steps", s.name,
                 s.cluster.gpus, ranks.size());
    run = engine::run_scenario(s, options);
  } catch (const workload::PlanError& e) {
    spdlog::error("{}", e.what());
    return kExitInfeasible;
  }
  const nlohmann::json run_report =
      to_json(report::make_run_report(s, *run, {context.command_line, args.network, false, args.iterations}));
  std::vector<nlohmann::json> comparisons;
  for (size_t i = 0; i < traces.size(); ++i) {
    comparisons.push_back(report::make_compare_report(
        s, *run, run_report, traces[i],
        {files[i].string(), ranks[i], context.command_line, args.network, args.iterations, args.kernels}));
  }
  if (comparisons.size() == 1) {
    print_result(args.format, {[&] { return json_text(comparisons.front()); },
                               [&] { return report::render_compare_table(comparisons.front()); }});
  } else {
    const nlohmann::json report = report::make_ranks_report(comparisons);
    print_result(args.format,
                 {[&] { return json_text(report); }, [&] { return report::render_ranks_table(report); }});
  }
  return kExitOk;
}

}  // namespace

void register_compare(CLI::App& app, Context& context) {
  auto args = std::make_shared<CompareArgs>();
  CLI::App* cmd = app.add_subcommand(
      "compare", "Compare simulated training steps with those measured by the PyTorch profiler on real GPUs");
  args->scenario.add_to(cmd);
  cmd->add_option(
         "--trace", args->traces,
         "PyTorch profiler traces (Chrome JSON: prof.export_chrome_trace) of the same training, one per "
         "rank, or folders of them; prof.step() marks each iteration")
      ->required();
  cmd->add_option("--rank", args->rank,
                  "The plan's rank a single trace was taken on (default: its distributedInfo, else 0)");
  cmd->add_option("--device", args->device, "The traces' GPU to read (default: each trace's busiest)");
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
  add_format_option(cmd, args->format, false);
  cmd->callback([args, &context] { context.exit_code = compare(*args, context); });
}

}  // namespace trainsim::cli
