// trainsim search SCENARIO --gpus N: the best parallel plans for the scenario's model on N GPUs of its
// cluster, with counts of what was pruned and why.
#include <iostream>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "sim/report/accuracy_evidence.h"
#include "sim/search/report.h"
#include "sim/search/search.h"
#include "sim/validate/accuracy.h"
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
  search::PlanPins pins;
  std::vector<std::string> schedule, sequence_parallel, recompute;
};

// The enumerators named by `names` (already checked against the spellings by CLI11).
template <class E>
std::vector<E> enums_of(const std::vector<std::string>& names) {
  std::vector<E> out;
  for (const std::string& name : names) {
    for (const auto& [value, spelling] : config::EnumNames<E>::kNames) {
      if (name == spelling) out.push_back(value);
    }
  }
  return out;
}

template <class E>
std::vector<std::string> spellings() {
  std::vector<std::string> out;
  for (const auto& [value, spelling] : config::EnumNames<E>::kNames) out.emplace_back(spelling);
  return out;
}

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
  options.pins = args.pins;
  options.pins.schedule = enums_of<config::Schedule>(args.schedule);
  options.pins.sequence_parallel = enums_of<config::SequenceParallel>(args.sequence_parallel);
  options.pins.recompute = enums_of<config::Recompute>(args.recompute);
  options.command_line = context.command_line;
  search::SearchResult result;
  try {
    result = search::run_search(base, options);
  } catch (const std::invalid_argument& e) {
    std::cerr << "trainsim search: " << e.what() << '\n';
    return kExitUsage;
  }
  // How well published runs on these GPUs were predicted, for the plans' predicted times.
  config::Scenario planned = base;
  planned.cluster.gpus = args.gpus;
  const report::AccuracyEvidence accuracy = validate::accuracy_for(planned, validate::shipped_accuracy());
  print_result(args.format, {[&] {
                               nlohmann::json out = search::to_json(result);
                               out["accuracy"] = to_json(accuracy);
                               return json_text(out);
                             },
                             [&] {
                               return search::render_table(result, args.scenario.file.string(),
                                                           args.scenario.overrides) +
                                      "\n" + report::render_accuracy(accuracy);
                             }});
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
  add_format_option(cmd, args->format, false);
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
  // Pins: the values of a key the plans are held to (comma-separated or repeated).
  search::PlanPins& pins = args->pins;
  const std::string pins_group = "Pins (a comma-separated list: only those values; e.g. --tp 4,8)";
  const auto pin = [cmd, &pins_group](const std::string& flag, auto& values, const std::string& what) {
    cmd->add_option(flag, values, "Only plans with " + what)
        ->delimiter(',')
        ->check(CLI::PositiveNumber)
        ->group(pins_group);
  };
  pin("--tp", pins.tp, "these tensor-parallel degrees");
  pin("--pp", pins.pp, "these pipeline-parallel degrees");
  pin("--dp", pins.dp, "these data-parallel degrees");
  pin("--sp", pins.sp, "these sequence-parallel (context-parallel) degrees");
  pin("--vpp", pins.vpp, "these virtual pipeline stages per rank");
  pin("--ep", pins.ep, "these expert-parallel degrees");
  pin("--micro-batch", pins.micro_batch, "these micro-batch sizes");
  cmd->add_option("--zero", pins.zero_stage, "Only plans with these ZeRO stages")
      ->delimiter(',')
      ->check(CLI::Range(0, 3))
      ->group(pins_group);
  const auto enum_pin = [cmd, &pins_group](const std::string& flag, auto& names,
                                           const std::vector<std::string>& allowed, const std::string& what) {
    cmd->add_option(flag, names, "Only plans with " + what)
        ->delimiter(',')
        ->check(CLI::IsMember(allowed))
        ->group(pins_group);
  };
  enum_pin("--schedule", args->schedule, spellings<config::Schedule>(), "these pipeline schedules");
  enum_pin("--sequence-parallel", args->sequence_parallel, spellings<config::SequenceParallel>(),
           "these sequence-parallel kinds");
  enum_pin("--recompute", args->recompute, spellings<config::Recompute>(), "these recompute modes");
  cmd->add_option("--max-tp", pins.max_tp, "Only plans with at most this tensor-parallel degree")
      ->check(CLI::PositiveNumber)
      ->group(pins_group);
  cmd->add_option("--max-pp", pins.max_pp, "Only plans with at most this pipeline-parallel degree")
      ->check(CLI::PositiveNumber)
      ->group(pins_group);
  cmd->footer(
      "Enumerates dp, tp, pp, vpp, schedule, sequence-parallel kind and degree, expert parallelism, ZeRO "
      "stage, recompute, micro batch and FPDT chunk; drops plans that break a plan rule, then plans whose "
      "memory lower bound exceeds the HBM, then plans whose closed-form time is more than --margin slower "
      "than the K-th best fitting plan's; simulates the rest on the ideal network and, with --network "
      "simgrid, the best of them (within --refine-margin of the K-th) on SimGrid. The pins hold the space to "
      "the values given (--tp 4,8 --max-pp 8 --zero 1): everything else is still searched. Exits 4 when no "
      "plan fits, 2 when the pins leave no plan.");
  cmd->callback([args, &context] { context.exit_code = run(*args, context); });
}

}  // namespace trainsim::cli
