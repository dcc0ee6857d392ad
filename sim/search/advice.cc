#include "sim/search/advice.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "sim/estimate/iteration_time.h"
#include "sim/search/candidate.h"
#include "sim/search/plan_space.h"

namespace trainsim::search {
namespace {

using config::Recompute;
using config::Schedule;

// The plans one step from `c` on the same GPUs.
std::vector<PlanChoice> neighbours(const PlanChoice& c) {
  std::vector<PlanChoice> out;
  const auto add = [&](auto&& edit) {
    PlanChoice n = c;
    edit(n);
    out.push_back(n);
  };
  add([](PlanChoice& n) { n.micro_batch *= 2; });
  if (c.micro_batch % 2 == 0) add([](PlanChoice& n) { n.micro_batch /= 2; });
  if (c.dp % 2 == 0) {
    add([](PlanChoice& n) {
      n.tp *= 2;
      n.dp /= 2;
    });
    add([](PlanChoice& n) {
      n.pp *= 2;
      n.dp /= 2;
    });
  }
  if (c.tp % 2 == 0) {
    add([](PlanChoice& n) {
      n.tp /= 2;
      n.dp *= 2;
    });
  }
  if (c.pp % 2 == 0) {
    add([](PlanChoice& n) {
      n.pp /= 2;
      n.dp *= 2;
      if (n.pp == 1) {
        n.schedule = Schedule::kOneFOneB;
        n.vpp = 1;
      }
    });
  }
  if (c.pp > 1 && c.schedule == Schedule::kOneFOneB) {
    add([](PlanChoice& n) {
      n.schedule = Schedule::kInterleaved;
      n.vpp = 2;
    });
  }
  if (c.tp > 1 && c.sequence_parallel == config::SequenceParallel::kNone) {
    add([](PlanChoice& n) { n.sequence_parallel = config::SequenceParallel::kMegatron; });
  }
  for (const Recompute r : {Recompute::kNone, Recompute::kSelective, Recompute::kFull}) {
    if (r != c.recompute) add([r](PlanChoice& n) { n.recompute = r; });
  }
  for (int zero = 0; zero <= 3; ++zero) {
    if (zero != c.zero_stage) add([zero](PlanChoice& n) { n.zero_stage = zero; });
  }
  return out;
}

// The estimate of each scenario, computed on up to one thread per core (an estimate reads only its
// scenario: no SimGrid, no shared state); rethrows the first scenario's exception, if any.
std::vector<estimate::IterationTimeEstimate> estimate_all(const std::vector<config::Scenario>& scenarios) {
  std::vector<estimate::IterationTimeEstimate> out(scenarios.size());
  std::vector<std::exception_ptr> failures(scenarios.size());
  std::atomic<size_t> next{0};
  const auto work = [&] {
    // The run reported its own warnings; the neighbours' (extrapolated shapes...) are not the user's.
    WarningLog ignored;
    for (size_t i = next++; i < scenarios.size(); i = next++) {
      try {
        out[i] = estimate::estimate_iteration_time(scenarios[i], &ignored);
      } catch (...) {
        failures[i] = std::current_exception();
      }
    }
  };
  {
    const size_t threads =
        std::min<size_t>(scenarios.size(), std::max(1U, std::thread::hardware_concurrency()));
    std::vector<std::jthread> helpers;
    for (size_t t = 1; t < threads; ++t) helpers.emplace_back(work);
    work();
  }
  for (const std::exception_ptr& failure : failures) {
    if (failure) std::rethrow_exception(failure);
  }
  return out;
}

}  // namespace

std::vector<PlanChange> advise(const config::Scenario& scenario, double simulated_s, size_t top) {
  // The scenario itself first, then each neighbour that obeys the plan rules.
  const CandidateBuilder builder(scenario);
  const int64_t gpus = scenario.cluster.gpus;
  std::vector<config::Scenario> scenarios = {scenario};
  std::vector<PlanChoice> choices;
  for (const PlanChoice& choice : neighbours(PlanChoice::of(scenario))) {
    CandidateCheck check = builder.check(choice, gpus);
    if (!check.scenario) continue;
    scenarios.push_back(std::move(*check.scenario));
    choices.push_back(choice);
  }
  const std::vector<estimate::IterationTimeEstimate> estimates = estimate_all(scenarios);
  const double own_s = estimates.front().iteration_s;
  if (own_s <= 0) return {};
  const double scale = simulated_s / own_s;
  std::vector<PlanChange> out;
  for (size_t i = 0; i < choices.size(); ++i) {
    const estimate::IterationTimeEstimate& e = estimates[i + 1];
    const double predicted_s = e.iteration_s * scale;
    if (!e.fits || predicted_s >= 0.99 * simulated_s) continue;
    out.push_back({fmt::format("--set {}", fmt::join(choices[i].overrides_from(scenario, gpus), " --set ")),
                   e.iteration_s, predicted_s, predicted_s / simulated_s - 1, e.peak_hbm_bytes});
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const PlanChange& x, const PlanChange& y) { return x.predicted_s < y.predicted_s; });
  // Changes the estimate cannot tell apart (selective recomputation with a fused attention kernel is no
  // recomputation) are one change: the first.
  out.erase(std::unique(out.begin(), out.end(),
                        [](const PlanChange& x, const PlanChange& y) {
                          return x.estimated_s == y.estimated_s && x.peak_hbm_bytes == y.peak_hbm_bytes;
                        }),
            out.end());
  if (out.size() > top) out.resize(top);
  return out;
}

nlohmann::json to_json(const std::vector<PlanChange>& changes) {
  nlohmann::json out = nlohmann::json::array();
  for (const PlanChange& c : changes) {
    out.push_back({{"change", c.change},
                   {"estimated_s", c.estimated_s},
                   {"predicted_s", c.predicted_s},
                   {"predicted_change", c.predicted_change},
                   {"peak_hbm_bytes", c.peak_hbm_bytes}});
  }
  return out;
}

}  // namespace trainsim::search
