#include "sim/cost/collective_calibration.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "sim/cost/collective.h"
#include "sim/cost/collective_metrics.h"

namespace trainsim::cost {
namespace {

// The GPUs a fit was measured on: the first ranks/nodes GPUs of each of its first nodes.
std::vector<int> fit_members(const config::CollectiveFit& fit, const TopologyView& topology) {
  std::vector<int> members;
  const int64_t per_node = fit.ranks / std::max<int64_t>(1, fit.nodes);
  if (fit.nodes < 1 || per_node < 1 || per_node * fit.nodes != fit.ranks ||
      per_node > topology.gpus_per_node || fit.nodes * topology.gpus_per_node > topology.gpu_count) {
    return members;
  }
  for (int64_t node = 0; node < fit.nodes; ++node) {
    for (int64_t i = 0; i < per_node; ++i)
      members.push_back(static_cast<int>(node * topology.gpus_per_node + i));
  }
  return members;
}

// Sizes across [min_bytes, max_bytes) where the efficiency is sampled: the start, points a factor
// of 2 apart, and just below the end, so that the next range (which starts there, usually with
// another latency and bandwidth: another NCCL protocol) keeps its own point at its start.
std::vector<double> sample_sizes(const config::CollectiveFit& fit) {
  std::vector<double> sizes;
  const double lo = std::max(fit.min_bytes, 1.0);
  const double hi = std::max(fit.max_bytes * (1 - 1e-9), lo);
  for (double s = lo; s < hi; s *= 2) sizes.push_back(s);
  sizes.push_back(hi);
  return sizes;
}

}  // namespace

CalibratedTuning tuning_from_fits(const config::HardwareProfile& profile, const TopologyView& topology) {
  CalibratedTuning out;
  const CollectiveModel ideal{topology, {}};
  using Key = std::tuple<CollectiveKind, Algorithm, Tier>;
  std::map<Key, std::map<double, double>> points;
  std::map<Key, std::pair<double, double>> base_latency;  // (min bytes of the fit it came from, s)
  for (const config::CollectiveFit& fit : profile.collective_fits) {
    const std::vector<int> members = fit_members(fit, topology);
    if (members.size() < 2 || fit.kind == CollectiveKind::kBarrier) {
      ++out.fits_skipped;
      continue;
    }
    const double factor = bus_bandwidth_factor(fit.kind, static_cast<int>(fit.ranks));
    bool used = false;
    // Every algorithm that can run this group is calibrated against the same measurement, so the
    // planner's choice among them compares calibrated estimates (the measurement is what NCCL
    // achieved, whichever algorithm it used).
    for (const Algorithm algorithm : {Algorithm::kRing, Algorithm::kTree, Algorithm::kHierarchical,
                                      Algorithm::kNvls, Algorithm::kPairwise, Algorithm::kDirect}) {
      for (const double bytes : sample_sizes(fit)) {
        CollectiveSchedule schedule;
        try {
          schedule = plan_collective(fit.kind, members, bytes, ideal, algorithm);
        } catch (const CollectiveError&) {
          break;  // this algorithm does not implement the kind or fit the group
        }
        double model_latency = 0;
        for (const Phase& phase : schedule.phases) model_latency += phase.latency_s;
        const double model_transfer = estimate_duration_s(schedule, ideal) - model_latency;
        const Key key{fit.kind, algorithm, fit.nodes > 1 ? Tier::kInterNode : Tier::kIntraNode};
        // The latency the model lacks, taken from the fit of the smallest sizes.
        auto [base, inserted] = base_latency.try_emplace(key, fit.min_bytes, 0.0);
        if (inserted || fit.min_bytes < base->second.first) {
          base->second = {fit.min_bytes, std::max(0.0, fit.latency_s - model_latency)};
        }
        const double measured_transfer = fit.latency_s + bytes * factor / fit.bus_bandwidth_bytes_per_s -
                                         model_latency - base->second.second;
        if (model_transfer <= 0 || measured_transfer <= 0) continue;
        points[key][bytes] = model_transfer / measured_transfer;
        used = true;
      }
    }
    ++(used ? out.fits_used : out.fits_skipped);
  }
  for (const auto& [key, curve] : points) {
    AlgorithmTuning& t = out.tuning.entries[key];
    t.base_latency_s = base_latency.at(key).second;
    for (const auto& [bytes, efficiency] : curve) t.efficiency.push_back({bytes, efficiency});
  }
  if (profile.stack) {
    using config::StackParameter;
    out.tuning.tier_fraction = {profile.stack->parameters[StackParameter::kCollectiveFractionNvlink],
                                profile.stack->parameters[StackParameter::kCollectiveFractionNetwork]};
  }
  return out;
}

}  // namespace trainsim::cost
