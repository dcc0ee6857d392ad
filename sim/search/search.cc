#include "sim/search/search.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <stdexcept>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "sim/common/isolated.h"
#include "sim/config/diagnostics.h"
#include "sim/config/loader.h"
#include "sim/engine/scenario_run.h"
#include "sim/report/run_report.h"
#include "sim/search/candidate.h"
#include "sim/search/screening.h"
#include "sim/workload/pipeline_schedule.h"

namespace trainsim::search {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

// Most short simulations one child runs on the ideal network (simulate_short_runs).
constexpr size_t kIdealBatch = 16;
// Plans simulated per round while fewer than K fit (independent of --jobs, so the set of simulated
// plans, and the output, is the same whatever the parallelism).
constexpr size_t kMinRound = 8;

// The micro-batch counts steps 3 and 4 simulate a plan of `s` at on `network`: the schedule's
// steady-state pair (workload::steady_state_counts), from which its iteration extrapolates exactly,
// when those two short simulations are cheaper than one of all m micro-batches; else m alone. Always
// m for ZB-V, whose iteration is not exactly affine in m, and on SimGrid for plans with two lanes of
// kernels (DualPipeV, combined 1F1B): which lane takes the GPU when both ask at one instant follows
// SimGrid's actor order, and a DualPipeV plan of the search tests extrapolates 0.4 % off its full run.
std::vector<int64_t> step3_counts(const config::Scenario& s, engine::NetworkModel network) {
  const int64_t m = s.training.global_batch / (s.training.micro_batch * s.parallelism.dp);
  const workload::SteadyStateCounts steady = workload::steady_state_counts(
      s.parallelism.schedule, s.parallelism.pp, s.parallelism.vpp, s.parallelism.ep_comm_overlap);
  const bool two_lanes =
      s.parallelism.schedule == config::Schedule::kDualPipeV || s.parallelism.ep_comm_overlap;
  if (m <= steady.fewer + steady.more || s.parallelism.schedule == config::Schedule::kZbV ||
      (network == engine::NetworkModel::kSimgrid && two_lanes)) {
    return {m};
  }
  return {steady.fewer, steady.more};
}

// Simulates `plan` in the calling (child) process with `simulate_scenario` (its scenario -> JSON),
// or returns {"invalid": rule, "message": ...} for a plan that breaks a plan rule.
template <class Simulate>
json simulate_in_child(const CandidateBuilder& builder, const PlanChoice& plan, int64_t gpus,
                       const Simulate& simulate_scenario) {
  spdlog::set_level(spdlog::level::err);  // the child's own log: keep the parent's progress readable
  const CandidateCheck check = builder.check(plan, gpus);
  if (!check.scenario) return {{"invalid", check.rejection.rule}, {"message", check.rejection.message}};
  return simulate_scenario(*check.scenario);
}

// A short simulation of one plan at `micro_batches` (step3_counts) on `network`:
// {"micro_batches", "iteration_time_s", "peak_hbm_bytes", "peak_host_bytes_per_node"}.
json simulate_short(const config::Scenario& scenario, int64_t micro_batches, engine::NetworkModel network) {
  config::Scenario s = scenario;
  s.training.global_batch = micro_batches * s.training.micro_batch * s.parallelism.dp;
  engine::RunOptions options;
  options.network = network;
  const std::unique_ptr<engine::ScenarioRun> run = engine::run_scenario(s, options);
  const report::MemoryPeaks peaks = report::memory_peaks(s, *run);
  return {{"micro_batches", micro_batches},
          {"iteration_time_s", run->result.iteration_time_s},
          {"peak_hbm_bytes", peaks.hbm_bytes},
          {"peak_host_bytes_per_node", peaks.host_bytes_per_node}};
}

// One plan's short simulations (step3_counts) and what extrapolating them to its m needs.
struct ShortRuns {
  std::vector<json> runs;     // by micro-batch count
  int64_t micro_batches = 0;  // the plan's m
  bool peaks_grow = false;    // GPipe: the memory peaks grow with m
  // The first run that is an object with `key` ("error": the simulation failed, "invalid": the plan
  // breaks a rule only the workload checks), or nullptr.
  const json* find(const char* key) const {
    const auto it = std::find_if(runs.begin(), runs.end(), [&](const json& r) { return r.contains(key); });
    return it == runs.end() ? nullptr : &*it;
  }
};

// Simulates each of `plans` at its step3_counts on `network` in forked children (o.jobs at once),
// logging `progress` with the runs done every kProgressInterval_s and at the end. On SimGrid each
// simulation has a child of its own (one engine per process); on the ideal network a child runs a
// batch (up to kIdealBatch, at least kChunksPerJob batches per job), so that all but the first reuse
// the memory the first faulted in: a fresh child's graphs cost a third of its time in page faults. A
// batch whose child fails is rerun one simulation per child, so that the failure is the plan's own.
std::vector<ShortRuns> simulate_short_runs(const CandidateBuilder& builder,
                                           const std::vector<PlanChoice>& plans, engine::NetworkModel network,
                                           const SearchOptions& o, const std::string& progress) {
  struct Task {
    size_t plan;
    int64_t micro_batches;
  };
  std::vector<Task> tasks;
  std::vector<ShortRuns> out(plans.size());
  for (size_t i = 0; i < plans.size(); ++i) {
    const CandidateCheck check = builder.check(plans[i], o.gpus);
    if (!check.scenario) {  // screening passed it: cannot happen, but the child reports it
      tasks.push_back({i, 0});
      continue;
    }
    const config::Scenario& s = *check.scenario;
    out[i].micro_batches = s.training.global_batch / (s.training.micro_batch * s.parallelism.dp);
    out[i].peaks_grow = s.parallelism.schedule == config::Schedule::kGpipe;
    for (const int64_t count : step3_counts(s, network)) tasks.push_back({i, count});
  }
  const auto run_task = [&](size_t t) {
    return simulate_in_child(builder, plans[tasks[t].plan], o.gpus, [&](const config::Scenario& s) {
      return simulate_short(s, tasks[t].micro_batches, network);
    });
  };
  size_t done = 0;
  Clock::time_point last_progress = Clock::now();
  const auto finished = [&](size_t t, json run) {
    out[tasks[t].plan].runs.push_back(std::move(run));
    if (++done == tasks.size() || seconds_since(last_progress) >= kProgressInterval_s) {
      spdlog::info("{}: {} of {} runs done", progress, done, tasks.size());
      last_progress = Clock::now();
    }
  };
  const size_t per_batch =
      network == engine::NetworkModel::kIdeal
          ? std::clamp<size_t>(tasks.size() / (static_cast<size_t>(o.jobs) * kChunksPerJob), 1, kIdealBatch)
          : 1;
  const size_t batches = (tasks.size() + per_batch - 1) / per_batch;
  const auto batch_tasks = [&](size_t b) {
    return std::make_pair(b * per_batch, std::min(tasks.size(), (b + 1) * per_batch));
  };
  std::vector<size_t> rerun;  // tasks of failed batches
  IsolatedOptions options;
  options.jobs = o.jobs;
  run_isolated(
      batches, options,
      [&](size_t b) {
        json runs = json::array();
        const auto [begin, end] = batch_tasks(b);
        for (size_t t = begin; t < end; ++t) runs.push_back(run_task(t));
        return runs;
      },
      [&](size_t b, IsolatedResult r) {
        const auto [begin, end] = batch_tasks(b);
        for (size_t t = begin; t < end; ++t) {
          if (r.ok) {
            finished(t, std::move(r.value[t - begin]));
          } else if (end - begin == 1) {
            finished(t, json{{"error", r.error}});
          } else {
            rerun.push_back(t);
          }
        }
      });
  run_isolated(
      rerun.size(), options, [&](size_t i) { return run_task(rerun[i]); },
      [&](size_t i, IsolatedResult r) {
        finished(rerun[i], r.ok ? std::move(r.value) : json{{"error", r.error}});
      });
  for (ShortRuns& plan : out) {
    std::sort(plan.runs.begin(), plan.runs.end(), [](const json& a, const json& b) {
      return a.value("micro_batches", int64_t{0}) < b.value("micro_batches", int64_t{0});
    });
  }
  return out;
}

// Step 3's result of a plan of `m` micro-batches from its simulations (one of all m, or the steady-
// state pair extrapolated: the time and, under GPipe, whose peaks grow with each micro-batch, the
// memory peaks; the larger count's peaks otherwise).
struct Step3Run {
  double iteration_s = 0;
  double peak_hbm_bytes = 0;
  double peak_host_bytes_per_node = 0;
};
Step3Run extrapolate(const ShortRuns& plan) {
  const std::vector<json>& runs = plan.runs;
  const int64_t m = plan.micro_batches;
  const json& b = runs.back();
  Step3Run out{b.at("iteration_time_s").get<double>(), b.at("peak_hbm_bytes").get<double>(),
               b.at("peak_host_bytes_per_node").get<double>()};
  if (runs.size() == 1) return out;
  const json& a = runs.front();
  const double f =
      static_cast<double>(m - a.at("micro_batches").get<int64_t>()) /
      static_cast<double>(b.at("micro_batches").get<int64_t>() - a.at("micro_batches").get<int64_t>());
  const auto at_m = [&](const char* key) {
    return a.at(key).get<double>() + (b.at(key).get<double>() - a.at(key).get<double>()) * f;
  };
  out.iteration_s = at_m("iteration_time_s");
  if (plan.peaks_grow) {
    out.peak_hbm_bytes = at_m("peak_hbm_bytes");
    out.peak_host_bytes_per_node = at_m("peak_host_bytes_per_node");
  }
  return out;
}

// One plan simulated in full on `network`: {"run": its run report}.
json simulate_in_full(const config::Scenario& s, engine::NetworkModel network,
                      const std::string& command_line) {
  engine::RunOptions options;
  options.network = network;
  const std::unique_ptr<engine::ScenarioRun> run = engine::run_scenario(s, options);
  return {{"run",
           to_json(report::make_run_report(s, *run, {command_line, engine::to_string(network), false, 1}))}};
}

// The objective of a plan of `o`'s search whose iteration takes `iteration_s`: seconds, or tokens per
// US dollar.
double objective_value(double iteration_s, const config::Scenario& base, const SearchOptions& o,
                       std::optional<double> price) {
  if (o.objective == Objective::kTime) return iteration_s;
  const double tokens = static_cast<double>(base.training.global_batch * base.model.seq_len);
  return tokens / iteration_s * 3600.0 / (static_cast<double>(o.gpus) * *price);
}

bool better(const SimulatedPlan& a, const SimulatedPlan& b, Objective objective) {
  if (a.objective_value != b.objective_value) {
    return objective == Objective::kTime ? a.objective_value < b.objective_value
                                         : a.objective_value > b.objective_value;
  }
  return a.index < b.index;
}

// What step 3's simulations said of a plan: {"invalid": rule, "message"} (a rule only the workload
// checks), {"error": ...}, or the extrapolated run.
struct Step3Outcome {
  json rejection;  // an object with "invalid" or "error", or null
  Step3Run run;

  // Whether the plan simulated and its peaks fit `base`'s memory.
  bool fits(const config::Scenario& base) const {
    return rejection.is_null() && base.memory_fits(run.peak_hbm_bytes, run.peak_host_bytes_per_node);
  }
};

// Simulates the survivors in closed-form order (step 3), round by round, until the closed-form bound
// prunes the rest (see search.h); plans already in `outcomes` are not simulated again. Returns the
// closed-form limit it ended with (infinite while fewer than K fit).
double walk_in_order(const CandidateBuilder& builder, const PlanSpace& space, const SearchOptions& o,
                     const Screening& screening, std::map<size_t, Step3Outcome>& outcomes) {
  const std::vector<Survivor>& order = screening.survivors;
  const config::Scenario& base = builder.base();
  size_t next = 0;
  size_t fitting = 0;  // fitting plans among order[0, next)
  double limit = std::numeric_limits<double>::infinity();
  while (next < order.size() && order[next].closed_form_s <= limit) {
    size_t end = next;
    if (fitting >= static_cast<size_t>(o.top)) {
      while (end < order.size() && order[end].closed_form_s <= limit) ++end;
    } else {
      end = std::min(order.size(), next + std::max(kMinRound, static_cast<size_t>(o.top) - fitting));
    }
    std::vector<size_t> todo;  // positions in order
    std::vector<PlanChoice> plans;
    for (size_t i = next; i < end; ++i) {
      if (outcomes.contains(order[i].index)) continue;
      todo.push_back(i);
      plans.push_back(space.at(order[i].index));
    }
    if (!plans.empty()) {
      const std::vector<ShortRuns> runs = simulate_short_runs(
          builder, plans, engine::NetworkModel::kIdeal, o,
          fmt::format("search: simulating plans {}..{} of {} (closed form up to {:.4g} s)", next + 1, end,
                      order.size(), order[end - 1].closed_form_s));
      for (size_t i = 0; i < runs.size(); ++i) {
        Step3Outcome outcome;
        if (const json* rejected = runs[i].find("invalid")) outcome.rejection = *rejected;
        if (const json* failed = runs[i].find("error")) outcome.rejection = *failed;
        if (outcome.rejection.is_null()) outcome.run = extrapolate(runs[i]);
        outcomes.emplace(order[todo[i]].index, std::move(outcome));
      }
    }
    for (size_t i = next; i < end; ++i) {
      if (!outcomes.at(order[i].index).fits(base)) continue;
      if (++fitting == static_cast<size_t>(o.top)) limit = (1 + o.margin) * order[i].closed_form_s;
    }
    next = end;
    spdlog::info("search: simulated the first {} of {} plans in closed-form order; {} fit", next,
                 order.size(), fitting);
  }
  return limit;
}

// Step 3 (search.h) over the survivors of step 2b, estimating the waiting candidates whose lower bound
// is within the limit the walk ends with (screening.h) and walking again until none is; counts what it
// simulated into `result` and plans the workload rejects only now into `screening`. Returns the
// simulated plans that fit, with their ranking_s.
std::vector<SimulatedPlan> simulate_in_order(const CandidateBuilder& builder, const PlanSpace& space,
                                             const SearchOptions& o, Screening& screening,
                                             SearchResult& result) {
  std::map<size_t, Step3Outcome> outcomes;  // by plan index
  for (;;) {
    const double limit = walk_in_order(builder, space, o, screening, outcomes);
    if (screening.waiting() == 0 || screening.candidates[screening.estimated].lower_bound_s > limit) break;
    spdlog::info(
        "search: the closed-form limit {:.4g} s reaches candidates not yet estimated; estimating them",
        limit);
    estimate_up_to(builder, space, o.jobs, limit, screening);
  }
  const config::Scenario& base = builder.base();
  std::vector<SimulatedPlan> fitting;
  int64_t unsimulated = 0;
  for (const Survivor& survivor : screening.survivors) {
    const auto it = outcomes.find(survivor.index);
    if (it == outcomes.end()) {
      ++unsimulated;
      continue;
    }
    SimulatedPlan p;
    p.index = survivor.index;
    p.plan = space.at(survivor.index);
    p.memory_bound_bytes = survivor.memory_bound_bytes;
    p.closed_form_s = survivor.closed_form_s;
    const Step3Outcome& outcome = it->second;
    if (outcome.rejection.contains("invalid")) {
      screening.add_invalid(outcome.rejection.at("invalid").get<std::string>(), 1,
                            outcome.rejection.at("message").get<std::string>(), p.index, p.plan.describe());
      continue;
    }
    ++result.simulated;
    if (outcome.rejection.contains("error")) {
      result.failures.push_back({p.index, p.plan, outcome.rejection.at("error").get<std::string>()});
      continue;
    }
    if (!outcome.fits(base)) {
      ++result.simulated_over_memory;
      continue;
    }
    p.ranking_s = outcome.run.iteration_s;
    p.objective_value = objective_value(p.ranking_s, base, o, result.price_per_gpu_hour_usd);
    fitting.push_back(std::move(p));
  }
  result.slower_bound = unsimulated;
  result.kernel_time_bound = screening.waiting();
  return fitting;
}

// `ranked` in order of `time` (then of index), cut after the K-th and every other within (1 + margin)
// of it.
std::vector<SimulatedPlan> first_within(std::vector<SimulatedPlan> ranked, double SimulatedPlan::*time,
                                        int top, double margin) {
  std::sort(ranked.begin(), ranked.end(), [&](const SimulatedPlan& a, const SimulatedPlan& b) {
    return a.*time != b.*time ? a.*time < b.*time : a.index < b.index;
  });
  size_t end = std::min(ranked.size(), static_cast<size_t>(top));
  if (end == 0) return {};
  const double limit = (1 + margin) * (ranked[end - 1].*time);
  while (end < ranked.size() && ranked[end].*time <= limit) ++end;
  ranked.resize(end);
  return ranked;
}

// Step 4's refinement (search.h): simulates on SimGrid, at the counts of step 3 and extrapolated
// (SimulatedPlan::refined_s), the plans step 3 ranked (`ranked`): the first K by step 3's time and
// every other within (1 + refine_margin) of the K-th. Counts them into result.refined and adds each
// one's refined / step-3 time to result.refine. Returns them, less those that failed (in
// result.failures).
std::vector<SimulatedPlan> refine_on_simgrid(const CandidateBuilder& builder,
                                             std::vector<SimulatedPlan> ranked, const SearchOptions& o,
                                             SearchResult& result) {
  ranked = first_within(std::move(ranked), &SimulatedPlan::ranking_s, o.top, o.refine_margin);
  result.refined = static_cast<int64_t>(ranked.size());
  if (ranked.empty()) return {};
  std::vector<PlanChoice> plans;
  for (const SimulatedPlan& p : ranked) plans.push_back(p.plan);
  const std::vector<ShortRuns> runs = simulate_short_runs(
      builder, plans, engine::NetworkModel::kSimgrid, o,
      fmt::format("search: refining the {} best plans on SimGrid (step 3's time up to {:.4g} s)",
                  ranked.size(), ranked.back().ranking_s));
  std::vector<SimulatedPlan> out;
  for (size_t i = 0; i < ranked.size(); ++i) {
    SimulatedPlan& p = ranked[i];
    const json* failed = runs[i].find("error");
    if (failed == nullptr) failed = runs[i].find("invalid");  // step 3 simulated it, so an error here
    if (failed != nullptr) {
      result.failures.push_back({p.index, p.plan, failed->value("error", failed->dump())});
      continue;
    }
    p.refined_s = extrapolate(runs[i]).iteration_s;
    result.refine.add(p.refined_s / p.ranking_s);
    out.push_back(std::move(p));
  }
  return out;
}

// Simulates in full on `network`, for their run reports, the first K of `ranked` by `time` (step 3's
// time on the ideal network, the refined time on SimGrid) and those tied with the K-th; counts them
// into result.reported and adds each one's full time / `time` to result.extrapolation (1 up to
// rounding: the extrapolation is exact). Returns the plans with their run reports.
std::vector<SimulatedPlan> simulate_best_in_full(const CandidateBuilder& builder,
                                                 std::vector<SimulatedPlan> ranked,
                                                 engine::NetworkModel network, double SimulatedPlan::*time,
                                                 const SearchOptions& o, SearchResult& result) {
  ranked = first_within(std::move(ranked), time, o.top, 0);
  const size_t end = ranked.size();
  result.reported = static_cast<int64_t>(end);
  if (end == 0) return {};
  spdlog::info("search: simulating the {} best plans in full on the {} network", end,
               engine::to_string(network));
  std::vector<json> runs(end);
  IsolatedOptions options;
  options.jobs = o.jobs;
  run_isolated(
      end, options,
      [&](size_t i) {
        return simulate_in_child(builder, ranked[i].plan, o.gpus, [&](const config::Scenario& s) {
          return simulate_in_full(s, network, o.command_line);
        });
      },
      [&](size_t i, IsolatedResult r) {
        runs[i] = r.ok ? std::move(r.value) : json{{"error", r.error}};
      });
  std::vector<SimulatedPlan> out;
  for (size_t i = 0; i < end; ++i) {
    SimulatedPlan& p = ranked[i];
    if (!runs[i].contains("run")) {  // the plan simulated in step 3, so an error here
      result.failures.push_back({p.index, p.plan, runs[i].value("error", runs[i].dump())});
      continue;
    }
    p.run = std::move(runs[i].at("run"));
    const double full_s = report::run_metrics(p.run).iteration_time_s;
    result.extrapolation.add(full_s / (p.*time));
    p.objective_value = objective_value(full_s, builder.base(), o, result.price_per_gpu_hour_usd);
    p.scenario_yaml = builder.yaml(p.plan, o.gpus);
    p.overrides = p.plan.overrides_from(builder.base(), o.gpus);
    out.push_back(std::move(p));
  }
  return out;
}

void check_options(const config::Scenario& base, const SearchOptions& o) {
  if (o.gpus < 1) throw std::invalid_argument(fmt::format("--gpus must be at least 1, not {}", o.gpus));
  if (o.top < 1) throw std::invalid_argument(fmt::format("--top must be at least 1, not {}", o.top));
  if (o.jobs < 1) throw std::invalid_argument(fmt::format("--jobs must be at least 1, not {}", o.jobs));
  if (!(o.margin >= 0))
    throw std::invalid_argument(fmt::format("--margin must be at least 0, not {}", o.margin));
  if (!(o.refine_margin >= 0)) {
    throw std::invalid_argument(fmt::format("--refine-margin must be at least 0, not {}", o.refine_margin));
  }
  const config::Topology& topology = base.cluster.topology;
  if (o.gpus > topology.total_gpus()) {
    throw std::invalid_argument(fmt::format(
        "--gpus {}: topology {} has {} GPUs ({} nodes of {}); search on at most {} GPUs or choose a larger "
        "topology with --set cluster.topology=FILE",
        o.gpus, topology.name, topology.total_gpus(), topology.fabric.nodes, topology.node.gpus,
        topology.total_gpus()));
  }
  const config::HardwareProfile& hardware = base.cluster.hardware;
  if (o.objective == Objective::kTokensPerDollar && !hardware.cost.price_per_gpu_hour_usd) {
    config::throw_config_error(
        {config::display_name(hardware.path)}, "cost.price_per_gpu_hour",
        fmt::format("the hardware profile {} has no price, which --objective tokens_per_dollar needs; give "
                    "the scenario your rate (`--set cluster.cost.price_per_gpu_hour=2.50USD`), add `cost: "
                    "{{price_per_gpu_hour: 2.50USD}}` with its source to the profile, or search with "
                    "--objective time",
                    hardware.name));
  }
}

}  // namespace

double default_margin(engine::NetworkModel network) {
  return network == engine::NetworkModel::kIdeal ? kDefaultMarginIdeal : kDefaultMarginSimgrid;
}

void RatioRange::add(double ratio) {
  min = max == 0 ? ratio : std::min(min, ratio);
  max = std::max(max, ratio);
  spread = max / min;
}

int64_t SearchResult::invalid_plans() const {
  int64_t n = 0;
  for (const RuleCount& r : invalid) n += r.plans;
  return n;
}

int64_t SearchResult::feasible() const {
  return simulated - simulated_over_memory - static_cast<int64_t>(failures.size());
}

SearchResult run_search(const config::Scenario& base, const SearchOptions& o) {
  check_options(base, o);
  const Clock::time_point start = Clock::now();
  SearchResult result;
  result.scenario = base.name;
  result.moe = base.model.moe.enabled();
  result.command_line = o.command_line;
  result.gpus = o.gpus;
  result.objective = o.objective;
  result.top = o.top;
  result.margin = o.margin;
  result.refine_margin = o.network == engine::NetworkModel::kSimgrid ? o.refine_margin : 0;
  result.network = engine::to_string(o.network);
  result.price_per_gpu_hour_usd = base.cluster.hardware.cost.price_per_gpu_hour_usd;

  const CandidateBuilder builder(base);
  const PlanSpace space = enumerate_plans(base, o.gpus, o.pins);
  result.pins = o.pins.describe();
  result.enumerated = static_cast<int64_t>(space.size());
  if (space.size() == 0) {
    throw std::invalid_argument(fmt::format(
        "no plan of {} on {} GPUs has {}: the pins leave nothing to search (tp x pp x dp x sp must be {}; "
        "micro-batches divide the global batch {} over dp)",
        base.name, o.gpus, result.pins, o.gpus, base.training.global_batch));
  }
  spdlog::info("search: {} plans ({} layouts x {} ZeRO/recompute variants) of {} on {} GPUs{}", space.size(),
               space.layouts.size(), space.variants(), base.name, o.gpus,
               result.pins.empty() ? "" : " held to " + result.pins);

  Screening screening = screen(builder, space, o.jobs);
  spdlog::info(
      "search: screened in {:.1f} s: {} invalid, {} the same as another plan, {} over the memory bound, {} "
      "candidates to estimate in order of their lower bound",
      seconds_since(start),
      result.enumerated - screening.over_memory - screening.duplicates -
          static_cast<int64_t>(screening.candidates.size()),
      screening.duplicates, screening.over_memory, screening.candidates.size());
  estimate_in_order(builder, space, o.jobs, o.top, o.margin, screening);
  result.screening_wall_s = seconds_since(start);
  result.over_memory_bound = screening.over_memory;
  result.duplicates = screening.duplicates;

  const Clock::time_point simulation_start = Clock::now();
  std::vector<SimulatedPlan> fitting = simulate_in_order(builder, space, o, screening, result);
  for (const SimulatedPlan& p : fitting) result.closed_form.add(p.ranking_s / p.closed_form_s);
  // A margin suggestion: the spread rounded up to the next 0.05.
  const auto suggest = [](double spread) { return std::ceil((spread - 1) * 20 + 1) / 20; };
  if (result.closed_form.spread > 1 + o.margin) {
    spdlog::warn(
        "search: simulated / closed-form time varies by a factor {:.2f} among the simulated plans, more than "
        "1 + margin = {:.2f}; a pruned plan may be better than those found: rerun with --margin {:.2f}",
        result.closed_form.spread, 1 + o.margin, suggest(result.closed_form.spread));
  }
  if (o.network == engine::NetworkModel::kSimgrid) {
    fitting = refine_on_simgrid(builder, std::move(fitting), o, result);
    if (result.refine.spread > 1 + o.refine_margin) {
      spdlog::warn(
          "search: SimGrid / ideal-network time varies by a factor {:.2f} among the refined plans, more "
          "than 1 + refine margin = {:.2f}; a pruned plan may be better than those found: rerun with "
          "--refine-margin {:.2f}",
          result.refine.spread, 1 + o.refine_margin, suggest(result.refine.spread));
    }
    result.ranked = static_cast<int64_t>(fitting.size());
    fitting =
        simulate_best_in_full(builder, std::move(fitting), o.network, &SimulatedPlan::refined_s, o, result);
  } else {
    result.ranked = static_cast<int64_t>(fitting.size());
    fitting =
        simulate_best_in_full(builder, std::move(fitting), o.network, &SimulatedPlan::ranking_s, o, result);
  }
  result.simulation_wall_s = seconds_since(simulation_start);

  std::sort(fitting.begin(), fitting.end(),
            [&](const SimulatedPlan& a, const SimulatedPlan& b) { return better(a, b, o.objective); });
  if (fitting.size() > static_cast<size_t>(o.top)) fitting.resize(static_cast<size_t>(o.top));
  result.best = std::move(fitting);
  for (auto& [rule, count] : screening.invalid) result.invalid.push_back(std::move(count));
  std::stable_sort(result.invalid.begin(), result.invalid.end(),
                   [](const RuleCount& a, const RuleCount& b) { return a.plans > b.plans; });
  result.wall_s = seconds_since(start);
  return result;
}

}  // namespace trainsim::search
