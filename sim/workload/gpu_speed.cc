#include "sim/workload/gpu_speed.h"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "sim/common/random.h"
#include "sim/workload/errors.h"

namespace trainsim::workload {
namespace {

// The spread's truncation, in standard deviations.
constexpr double kTruncation = 3;

// A standard normal draw for (seed, rank), truncated at kTruncation by redrawing (Box-Muller on a
// SplitMix64 stream: std::normal_distribution is implementation-defined).
double standard_normal(uint64_t seed, int64_t rank) {
  uint64_t state = splitmix64(seed ^ splitmix64(static_cast<uint64_t>(rank)));
  for (;;) {
    state = splitmix64(state);
    const double u1 = unit_interval(state);
    state = splitmix64(state);
    const double u2 = unit_interval(state);
    const double z = std::sqrt(-2 * std::log(u1)) * std::cos(2 * std::numbers::pi * u2);
    if (std::abs(z) <= kTruncation) return z;
  }
}

}  // namespace

std::vector<double> gpu_speeds(const config::Scenario& scenario, const ParallelPlan& plan) {
  const config::Stragglers& s = scenario.stragglers;
  if (!s.slows_gpus()) return {};
  const int64_t world = plan.world_size();
  std::vector<double> speed(static_cast<size_t>(world), 1.0);
  if (s.spread_stddev > 0) {
    for (int64_t r = 0; r < world; ++r) speed[r] = 1 + s.spread_stddev * standard_normal(s.seed, r);
  }
  const int64_t per_node = std::max<int64_t>(1, scenario.cluster.topology.node.gpus);
  for (const config::SlowGpus& entry : s.slow_gpus) {
    for (const int64_t r : entry.ranks) {
      TRAINSIM_WORKLOAD_CHECK(r < world) << "rank " << r << " of " << world;
      speed[r] *= entry.speed;
    }
    for (const int64_t n : entry.nodes) {
      TRAINSIM_WORKLOAD_CHECK(n * per_node < world) << "node " << n << " of " << world;
      for (int64_t r = n * per_node; r < std::min(world, (n + 1) * per_node); ++r) speed[r] *= entry.speed;
    }
  }
  return speed;
}

std::vector<double> simulated_speeds(const std::vector<double>& speeds, const ParallelPlan& plan,
                                     const std::vector<int64_t>& ranks, bool full) {
  if (speeds.empty()) return {};
  std::vector<double> out;
  out.reserve(ranks.size());
  for (const int64_t rank : ranks) {
    if (full) {
      out.push_back(speeds[rank]);
      continue;
    }
    double slowest = speeds[rank];
    for (const int64_t member : plan.class_members(plan.class_of(rank))) {
      slowest = std::min(slowest, speeds[member]);
    }
    out.push_back(slowest);
  }
  return out;
}

}  // namespace trainsim::workload
