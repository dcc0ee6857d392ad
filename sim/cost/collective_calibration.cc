#include "sim/cost/collective_calibration.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>
#include <vector>

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

// Where a fit's efficiency is sampled, with the time measured there: each of `samples` of the fit's
// group (kind, ranks, nodes, algorithm) inside [min_bytes, max_bytes], at its own measured time, so
// that a measurement the profile was built from is reproduced where it was taken; the range's ends
// at the fit's time where no sample sits, the end just below max_bytes so that the next range (which
// starts there, usually with another latency and bandwidth: another NCCL protocol) keeps its own point
// at its start. A fit without samples (a cited profile) is sampled at its start and a factor of 2 apart.
std::vector<std::pair<double, double>> measured_points(const config::CollectiveFit& fit,
                                                       const std::vector<config::CollectiveSample>& samples) {
  const double lo = std::max(fit.min_bytes, 1.0);
  const double hi = std::max(fit.max_bytes * (1 - 1e-9), lo);
  const auto fitted = [&fit](double bytes) {
    return fit.latency_s + bytes * bus_bandwidth_factor(fit.kind, static_cast<int>(fit.ranks)) /
                               fit.bus_bandwidth_bytes_per_s;
  };
  std::map<double, double> points;
  for (const config::CollectiveSample& s : samples) {
    if (s.kind == fit.kind && s.ranks == fit.ranks && s.nodes == fit.nodes && s.algorithm == fit.algorithm &&
        s.bytes >= fit.min_bytes && s.bytes <= fit.max_bytes) {
      points[std::clamp(s.bytes, lo, hi)] = s.duration_s;
    }
  }
  if (points.empty()) {
    for (double bytes = lo; bytes < hi; bytes *= 2) points[bytes] = fitted(bytes);
  }
  points.try_emplace(lo, fitted(lo));
  points.try_emplace(hi, fitted(hi));
  return {points.begin(), points.end()};
}

Algorithm algorithm_of(config::CollectiveAlgorithm algorithm) {
  switch (algorithm) {
    case config::CollectiveAlgorithm::kRing:
      return Algorithm::kRing;
    case config::CollectiveAlgorithm::kTree:
      return Algorithm::kTree;
    case config::CollectiveAlgorithm::kNvls:
      return Algorithm::kNvls;
  }
  return Algorithm::kRing;
}

}  // namespace

CalibratedTuning tuning_from_fits(const config::HardwareProfile& profile, const TopologyView& topology) {
  CalibratedTuning out;
  CollectiveModel ideal{topology, {}};
  ideal.tuning.nccl_protocols = false;
  const auto tier_of = [](const config::CollectiveFit& fit) {
    return fit.nodes > 1 ? Tier::kInterNode : Tier::kIntraNode;
  };
  for (const config::CollectiveFit& fit : profile.collective_fits) {
    if (fit.algorithm && fit_members(fit, topology).size() >= 2) {
      out.own_tables.insert({fit.kind, algorithm_of(*fit.algorithm), tier_of(fit)});
    }
  }
  std::map<CalibratedTuning::Key, std::map<double, double>> points;
  std::map<CalibratedTuning::Key, std::pair<double, double>> base_latency;  // (min bytes of its fit, s)
  for (const config::CollectiveFit& fit : profile.collective_fits) {
    const std::vector<int> members = fit_members(fit, topology);
    if (members.size() < 2 || fit.kind == CollectiveKind::kBarrier) {
      ++out.fits_skipped;
      continue;
    }
    const std::vector<std::pair<double, double>> measured = measured_points(fit, profile.collective_samples);
    bool used = false;
    // A table timed with one algorithm calibrates that algorithm. A table of NCCL's own choice
    // calibrates every algorithm that can run the group and has no table of its own, so the planner's
    // choice among them compares calibrated estimates (the measurement is what NCCL achieved, whichever
    // algorithm it used).
    std::vector<Algorithm> algorithms = {Algorithm::kRing, Algorithm::kTree,     Algorithm::kHierarchical,
                                         Algorithm::kNvls, Algorithm::kPairwise, Algorithm::kDirect};
    if (fit.algorithm) algorithms = {algorithm_of(*fit.algorithm)};
    for (const Algorithm algorithm : algorithms) {
      const CalibratedTuning::Key key{fit.kind, algorithm, tier_of(fit)};
      if (!fit.algorithm && out.own_tables.count(key) != 0) continue;
      for (const auto& [bytes, measured_s] : measured) {
        CollectiveSchedule schedule;
        try {
          schedule = plan_collective(fit.kind, members, bytes, ideal, algorithm);
        } catch (const CollectiveError&) {
          break;  // this algorithm does not implement the kind or fit the group
        }
        double model_latency = 0;
        for (const Phase& phase : schedule.phases) model_latency += phase.latency_s;
        const double model_transfer = estimate_duration_s(schedule, ideal) - model_latency;
        // The latency the model lacks, taken from the fit of the smallest sizes.
        auto [base, inserted] = base_latency.try_emplace(key, fit.min_bytes, 0.0);
        if (inserted || fit.min_bytes < base->second.first) {
          base->second = {fit.min_bytes, std::max(0.0, fit.latency_s - model_latency)};
        }
        const double measured_transfer = measured_s - model_latency - base->second.second;
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
