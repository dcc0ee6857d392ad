// trainsim run SCENARIO: simulates training iterations and reports time, throughput, MFU, the
// breakdown, memory feasibility and the communication log.
#include <algorithm>
#include <cmath>
#include <iostream>
#include <optional>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include "sim/analytic/memory_bound.h"
#include "sim/common/atomic_file.h"
#include "sim/common/interrupt.h"
#include "sim/engine/scenario_run.h"
#include "sim/report/csv.h"
#include "sim/report/run_report.h"
#include "sim/report/trace.h"
#include "sim/search/advice.h"
#include "sim/validate/accuracy.h"
#include "sim/validate/case.h"
#include "sim/validate/metrics.h"
#include "sim/validate/statistics.h"
#include "sim/workload/errors.h"
#include "sim/workload/plan.h"
#include "sim/workload/simulated_ranks.h"
#include "tools/trainsim/cli.h"

namespace trainsim::cli {
namespace {

struct RunArgs {
  ScenarioArgs scenario;
  std::string format = "table";
  bool full = false;
  bool all_traffic = false;
  int iterations = 1;
  std::string network = "simgrid";
  std::string trace;
  std::vector<int64_t> trace_ranks;
  bool trace_counters = true;
  bool ignore_memory = false;
  uint64_t max_events = 0;
  double time_limit_s = 0;
  size_t links = 0;
};

// The scenario's plan; none when the plan is invalid (the run reports that).
std::optional<workload::ParallelPlan> plan_of(const config::Scenario& s) {
  try {
    return workload::make_plan(s);
  } catch (const workload::PlanError&) {
    return std::nullopt;
  }
}

// Why `--trace-ranks` cannot be honoured: a rank outside the plan, or one a collapsed run does not
// simulate. Empty when it can, and when the plan itself is invalid (the run reports that).
std::string untraceable(const config::Scenario& s, const std::vector<int64_t>& wanted, bool full) {
  const std::optional<workload::ParallelPlan> plan = plan_of(s);
  if (!plan) return "";
  const std::vector<int64_t> simulated = full ? std::vector<int64_t>{} : workload::simulated_ranks(s, *plan);
  for (const int64_t rank : wanted) {
    if (rank < 0 || rank >= plan->world_size()) {
      return fmt::format("rank {} is not in this plan of {} GPUs", rank, plan->world_size());
    }
    if (!full && std::find(simulated.begin(), simulated.end(), rank) == simulated.end()) {
      return fmt::format(
          "rank {} is not simulated: a collapsed run simulates one rank per pipeline stage ({}); "
          "trace those, or add --full",
          rank, fmt::join(simulated, ", "));
    }
  }
  return "";
}

// Why `--links` cannot be honoured; empty when it can (or is not asked for), and when the plan itself
// is invalid.
std::string unrecordable_links(const config::Scenario& s, const RunArgs& args) {
  if (args.links == 0) return "";
  if (args.network == "ideal") return "the ideal network model has no links; use --network simgrid";
  if (args.format == "csv") return "the link load is in the table and JSON formats, not in the CSV row";
  if (args.full || args.all_traffic) return "";
  const std::optional<workload::ParallelPlan> plan = plan_of(s);
  if (!plan || static_cast<int64_t>(workload::simulated_ranks(s, *plan).size()) == plan->world_size())
    return "";
  return "a collapsed run (one rank per pipeline stage) loads the links with the simulated ranks' traffic "
         "only; add --all-traffic to play the other ranks' traffic too, or --full to simulate every rank";
}

// "--max-events 1000" or "--time-limit 60 s": the option behind a budget the engine names.
std::string budget_option(const RunArgs& args, const std::string& limit) {
  return limit == "max-events" ? fmt::format("--max-events {}", args.max_events)
                               : fmt::format("--time-limit {} s", args.time_limit_s);
}

// A line about every ten seconds of a long simulation: how far it is and about how long is left.
void log_progress(const engine::SimulationProgress& p) {
  const double done =
      static_cast<double>(p.ops_executed) / static_cast<double>(std::max<uint64_t>(p.ops_total, 1));
  spdlog::info("{:.0f}% of {} ops simulated (simulated time {:.3f} s) in {:.0f} s; about {:.0f} s left",
               100 * done, p.ops_total, p.simulated_s, p.wall_s,
               p.wall_s * (1 - done) / std::max(done, 1e-9));
}

// For a validation case run as it is (no --set), what it publishes beside what this run simulates,
// as `trainsim validate` would judge it: {id, metric, published, simulated, relative_error, network};
// null otherwise, or when one run does not give the case's metric (layer times, longest sequence,
// volume ratio).
nlohmann::json validation_case(const RunArgs& args, const config::Scenario& s,
                               const report::RunMetrics& metrics) {
  if (!args.scenario.overrides.empty() || !is_validation_case(args.scenario.file)) return nullptr;
  const validate::Case c = validate::load_validation_set(args.scenario.file).cases.at(0);
  const double simulated = validate::run_metric(c.metric, s, metrics);
  if (std::isnan(simulated)) return nullptr;
  return {{"id", c.id},
          {"metric", validate::to_string(c.metric)},
          {"published", c.published},
          {"simulated", simulated},
          {"relative_error", validate::relative_error(simulated, c.published)},
          {"network", validate::to_string(c.network)}};
}

// The table's line for a validation case (validation_case), naming where the run and the case's
// network differ.
std::string case_line(const nlohmann::json& c, const std::string& network) {
  if (c.is_null()) return "";
  const std::string case_network = c.at("network").get<std::string>();
  return fmt::format(
      "# validation case {}: {} published {:.6g}, simulated {:.6g} ({:+.1f}%){}\n",
      c.at("id").get<std::string>(), c.at("metric").get<std::string>(), c.at("published").get<double>(),
      c.at("simulated").get<double>(), 100 * c.at("relative_error").get<double>(),
      case_network == network ? "" : fmt::format("; validate simulates it on the {} network", case_network));
}

int run(const RunArgs& args, const Context& context) {
  const InterruptGuard interrupt_guard(
      "trainsim run",
      fmt::format("{}; rerun: {}",
                  args.trace.empty() ? "nothing was written"
                                     : fmt::format("the trace {} was not written", args.trace),
                  context.command_line));
  const config::Scenario s = args.scenario.load();
  if (const std::string why = untraceable(s, args.trace_ranks, args.full); !why.empty()) {
    spdlog::error("--trace-ranks: {}", why);
    return kExitUsage;
  }
  if (refuse_all_traffic(args.all_traffic, args.network)) return kExitUsage;
  if (const std::string why = unrecordable_links(s, args); !why.empty()) {
    spdlog::error("--links: {}", why);
    return kExitUsage;
  }
  if (!args.ignore_memory) {
    if (const std::string why = analytic::memory_bound_refusal(s); !why.empty()) {
      spdlog::error("infeasible plan: {} (--ignore-memory simulates it anyway)", why);
      return kExitInfeasible;
    }
  }
  // The trace's temporary file exists from the start, so an unwritable destination fails before the
  // simulation, not after it.
  std::optional<AtomicFile> trace_file;
  if (!open_output(args.trace, "--trace", trace_file)) return kExitUsage;
  engine::RunOptions options;
  options.engine.full = args.full;
  options.engine.mirror = args.all_traffic ? engine::MirrorMode::kCoupled : engine::MirrorMode::kNone;
  options.engine.iterations = args.iterations;
  options.engine.max_events = args.max_events;
  options.engine.time_limit_s = args.time_limit_s;
  options.engine.progress.call = log_progress;
  options.network = engine::network_model(args.network);
  options.busiest_links = args.links;
  spdlog::info("simulating {} on {} GPU{} ({})", s.name, s.cluster.gpus, s.cluster.gpus == 1 ? "" : "s",
               args.full          ? "every rank"
               : args.all_traffic ? "one rank per symmetry class, every rank's traffic"
                                  : "one rank per symmetry class");
  std::unique_ptr<engine::ScenarioRun> result;
  try {
    result = engine::run_scenario(s, options);
  } catch (const workload::PlanError& e) {
    spdlog::error("{}", e.what());
    return kExitInfeasible;
  } catch (const engine::BudgetExceededError& e) {
    spdlog::error(
        "{}: stopped by {} after {} of {} ops ({:.1f}%), at simulated time {:.6f} s; nothing was "
        "reported{}. Raise the budget, or simulate less (fewer --iterations, no --full, --network ideal)",
        s.name, budget_option(args, e.limit()), e.ops_executed(), e.ops_total(),
        100.0 * static_cast<double>(e.ops_executed()) /
            static_cast<double>(std::max<uint64_t>(e.ops_total(), 1)),
        e.simulated_s(), args.trace.empty() ? "" : " and no trace written");
    return kExitBudget;
  }
  if (args.all_traffic) {
    spdlog::info(
        "played {} of {} mirrored communications (the others are not in step and share no link with what "
        "is played)",
        result->result.mirrors_played, result->result.mirrors_found);
  }
  spdlog::info("simulated {} ops of {} ranks in {:.2f} s wall ({:.0f} ops/s)", result->result.ops_executed,
               result->ranks.size(), result->wall_s,
               static_cast<double>(result->result.ops_executed) / std::max(result->wall_s, 1e-9));
  report::RunReport report =
      report::make_run_report(s, *result, {context.command_line, args.network, args.full, args.iterations});
  report.why.changes = search::to_json(search::advise(s, report.metrics.iteration_time_s, 2));
  report.accuracy = validate::accuracy_for(s, validate::shipped_accuracy());
  const nlohmann::json as_case = validation_case(args, s, report.metrics);
  nlohmann::json report_json = to_json(report);
  if (!as_case.is_null()) report_json["validation_case"] = as_case;
  print_result(args.format, {[&] { return json_text(report_json); },
                             [&] { return case_line(as_case, args.network) + report::render_table(report); },
                             [&] { return report::metrics_csv(report_json); }});
  if (!args.trace.empty()) {
    report::TraceOptions trace_options;
    trace_options.ranks.insert(args.trace_ranks.begin(), args.trace_ranks.end());
    trace_options.counters = args.trace_counters;
    const size_t events = report::write_chrome_trace(s, *result, trace_options, trace_file->stream());
    trace_file->commit();
    spdlog::info("wrote {} trace events to {}", events, args.trace);
    if (events > 2'000'000) {
      spdlog::warn(
          "the trace has {} events; Perfetto struggles above a few million (narrow it with --trace-ranks)",
          events);
    }
  }
  return fit_exit_code(report::infeasibility(report.metrics.memory), args.ignore_memory);
}

}  // namespace

void register_run(CLI::App& app, Context& context) {
  auto args = std::make_shared<RunArgs>();
  CLI::App* cmd = app.add_subcommand("run", "Simulate training iterations of a scenario");
  args->scenario.add_to(cmd);
  add_format_option(cmd, args->format, true);
  CLI::Option* full =
      cmd->add_flag("--full", args->full, "Simulate every rank instead of one per symmetry class");
  cmd->add_flag("--all-traffic", args->all_traffic,
                "Simulate one rank per symmetry class but put every rank's traffic on the network: the "
                "collectives, sends and host copies of the ranks not simulated start with the simulated "
                "rank's they mirror (congestion of the whole job, at a fraction of --full's time)")
      ->excludes(full);
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
  cmd->add_flag("--trace-counters,!--no-trace-counters", args->trace_counters,
                "The HBM and power counters in the trace (--no-trace-counters: slices and flows only)")
      ->capture_default_str();
  cmd->add_flag("--ignore-memory", args->ignore_memory,
                "Report a plan that does not fit instead of exiting 4");
  cmd->add_option("--links", args->links,
                  "Report the load of every link by tier and the N busiest link directions (needs every "
                  "rank simulated: --full, unless every pipeline stage is a single GPU; SimGrid network)")
      ->check(CLI::Range(size_t{1}, size_t{100000}));
  cmd->add_option("--max-events", args->max_events,
                  "Stop (exit 5) once this many simulated ops have run with more to go; 0 = no limit")
      ->capture_default_str();
  cmd->add_option("--time-limit", args->time_limit_s,
                  "Stop (exit 5) once the simulation has run this many seconds of wall-clock time; 0 = no "
                  "limit")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->callback([args, &context] { context.exit_code = run(*args, context); });
}

}  // namespace trainsim::cli
