// trainsim search SCENARIO --gpus N: the best parallel plans for the scenario's model on N GPUs of its
// cluster, with counts of what was pruned and why.
#include <iostream>
#include <optional>
#include <stdexcept>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "sim/search/report.h"
#include "sim/search/search.h"
#include "tools/trainsim/cli.h"

namespace trainsim::cli {
namespace {

struct SearchArgs {
  ScenarioArgs scenario;
  int64_t gpus = 0;
  std::string objective = "time";
  int top = 5;
  int jobs = 1;
  std::string network = "simgrid";
  std::string format = "table";
  std::optional<double> margin;  // default_margin(network)
  double refine_margin = search::kDefaultRefineMargin;
};

int run(const SearchArgs& args, const Context& context) {
  const config::Scenario base = args.scenario.load();
  search::SearchOptions options;
  options.gpus = args.gpus;
  options.objective =
      args.objective == "tokens_per_dollar" ? search::Objective::kTokensPerDollar : search::Objective::kTime;
  options.top = args.top;
  options.jobs = args.jobs;
  options.network = engine::network_model(args.network);
  options.margin = args.margin ? *args.margin : search::default_margin(options.network);
  options.refine_margin = args.refine_margin;
  options.command_line = context.command_line;
  search::SearchResult result;
  try {
    result = search::run_search(base, options);
  } catch (const std::invalid_argument& e) {
    std::cerr << "trainsim search: " << e.what() << '\n';
    return kExitUsage;
  }
  if (args.format == "json") {
    std::cout << search::to_json(result).dump(2) << '\n';
  } else {
    std::cout << search::render_table(result, args.scenario.file.string(), args.scenario.overrides);
  }
  if (result.best.empty()) {
    spdlog::error("no plan of {} fits on {} GPUs", result.scenario, result.gpus);
    return kExitInfeasible;
  }
  return kExitOk;
}

}  // namespace

void register_search(CLI::App& app, Context& context) {
  auto args = std::make_shared<SearchArgs>();
  CLI::App* cmd =
      app.add_subcommand("search", "Find the best parallel plans for a scenario's model on N GPUs");
  args->scenario.add_to(cmd);
  cmd->add_option("--gpus", args->gpus, "GPUs of the scenario's cluster to plan for")
      ->required()
      ->check(CLI::PositiveNumber);
  cmd->add_option("--objective", args->objective,
                  "Rank by iteration time, or by tokens per US dollar (needs cost.price_per_gpu_hour in the "
                  "hardware profile)")
      ->check(CLI::IsMember({"time", "tokens_per_dollar"}))
      ->capture_default_str();
  cmd->add_option("--top", args->top, "How many of the best plans to report")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  add_jobs_option(cmd, args->jobs, "Plans screened or simulated");
  cmd->add_option("--network", args->network,
                  "Network model of the simulations: simgrid, or ideal (contention-free alpha-beta, fast)")
      ->check(CLI::IsMember({"simgrid", "ideal"}))
      ->capture_default_str();
  cmd->add_option("--format", args->format, "Output format")
      ->check(CLI::IsMember({"table", "json"}))
      ->capture_default_str();
  cmd->add_option(
         "--margin", args->margin,
         fmt::format("Simulate plans whose closed-form time is within this fraction of the K-th fitting "
                     "plan's (larger is safer and slower; default {} with --network ideal, {} with "
                     "simgrid)",
                     search::kDefaultMarginIdeal, search::kDefaultMarginSimgrid))
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--refine-margin", args->refine_margin,
                  "With --network simgrid: simulate on SimGrid the plans whose ideal-network time is within "
                  "this fraction of the K-th best's")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->footer(
      "Enumerates dp, tp, pp, vpp, schedule, sequence-parallel kind and degree, expert parallelism, ZeRO "
      "stage, recompute, micro batch and FPDT chunk; drops plans the scenario rules reject, then plans whose "
      "memory lower bound exceeds the HBM, then plans whose closed-form time is more than --margin slower "
      "than the K-th best fitting plan's; simulates the rest on the ideal network and, with --network "
      "simgrid, the best of them (within --refine-margin of the K-th) on SimGrid. Exits 4 when no plan "
      "fits.");
  cmd->callback([args, &context] { context.exit_code = run(*args, context); });
}

}  // namespace trainsim::cli
