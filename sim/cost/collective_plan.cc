// plan_collective: picks the algorithm, runs its generator, and turns the result into a schedule
// (merged flows, tuning applied).
#include <algorithm>
#include <array>
#include <limits>
#include <map>

#include <fmt/format.h>

#include "sim/cost/collective_algorithms.h"

namespace trainsim::cost {
namespace {

using internal::Group;
using internal::StepLatency;

// The algorithms implemented for `kind`, and which of them auto may choose for `group`.
std::vector<Algorithm> implemented(CollectiveKind kind) {
  switch (kind) {
    case CollectiveKind::kAllReduce:
    case CollectiveKind::kBarrier:
      return {Algorithm::kRing, Algorithm::kTree, Algorithm::kHierarchical, Algorithm::kNvls};
    case CollectiveKind::kAllGather:
    case CollectiveKind::kReduceScatter:
      return {Algorithm::kRing, Algorithm::kHierarchical};
    case CollectiveKind::kAllToAll:
      return {Algorithm::kPairwise};
    case CollectiveKind::kBroadcast:
    case CollectiveKind::kReduce:
      return {Algorithm::kRing};
    case CollectiveKind::kSendRecv:
      return {Algorithm::kDirect};
  }
  return {};
}

// What auto may run: an all-reduce across nodes as NCCL's tuner picks it (nccl_all_reduce_uses_tree,
// from the links' nominal rates, as NCCL detects them), one node's by the faster schedule.
std::vector<Algorithm> auto_candidates(CollectiveKind kind, const Group& group, double bytes,
                                       const TopologyView& topology) {
  if (kind != CollectiveKind::kAllReduce && kind != CollectiveKind::kBarrier) {
    return {implemented(kind).front()};
  }
  if (group.nodes.size() > 1) {
    const auto nodes = static_cast<int>(group.nodes.size());
    const bool tree = nccl_all_reduce_uses_tree(kind == CollectiveKind::kBarrier ? 0 : bytes, group.size(),
                                                nodes, topology.intra_bandwidth_bytes_per_s,
                                                topology.inter_bandwidth_bytes_per_s * group.size() / nodes);
    return {tree ? Algorithm::kTree : Algorithm::kRing};
  }
  if (topology.nvls) return {Algorithm::kRing, Algorithm::kNvls};
  return {Algorithm::kRing};
}

std::vector<Phase> generate(CollectiveKind kind, Algorithm algorithm, const Group& group, double bytes,
                            int root, const StepLatency& step) {
  const CollectiveKind as = kind == CollectiveKind::kBarrier ? CollectiveKind::kAllReduce : kind;
  switch (algorithm) {
    case Algorithm::kRing:
      return internal::ring_phases(as, group, bytes, root, step);
    case Algorithm::kTree:
      return internal::tree_phases(group, bytes, step);
    case Algorithm::kHierarchical:
      return internal::hierarchical_phases(as, group, bytes, step);
    case Algorithm::kNvls:
      return internal::nvls_phases(group, bytes, step);
    case Algorithm::kPairwise:
      return internal::pairwise_phases(group, bytes, step);
    case Algorithm::kDirect:
      return internal::direct_phases(group, bytes, step);
    case Algorithm::kAuto:
      break;
  }
  throw CollectiveError("no algorithm chosen");
}

// Merges flows with the same (source, destination), drops empty flows and phases, divides bytes by
// `efficiency` and adds `base_latency_s` to the first phase.
std::vector<Phase> finish(std::vector<Phase> phases, double efficiency, double base_latency_s) {
  std::vector<Phase> out;
  for (Phase& phase : phases) {
    std::map<std::pair<int, int>, double> merged;
    for (const Flow& f : phase.flows) merged[{f.src_gpu, f.dst_gpu}] += f.bytes;
    Phase p;
    p.latency_s = phase.latency_s;
    for (const auto& [ends, total] : merged) {
      if (total > 0) p.flows.push_back(Flow{ends.first, ends.second, total / efficiency});
    }
    if (!p.flows.empty() || p.latency_s > 0) out.push_back(std::move(p));
  }
  if (base_latency_s > 0) {
    if (out.empty()) out.emplace_back();
    out.front().latency_s += base_latency_s;
  }
  return out;
}

CollectiveSchedule build(CollectiveKind kind, Algorithm algorithm, const Group& group, double bytes, int root,
                         const CollectiveModel& model) {
  const Tier tier = group.nodes.size() > 1 ? Tier::kInterNode : Tier::kIntraNode;
  const AlgorithmTuning& tuning = model.tuning.of(kind, algorithm, tier);
  CollectiveSchedule schedule{kind, algorithm, group.members, bytes, {}, std::nullopt};
  const double moved = kind == CollectiveKind::kBarrier ? 0 : bytes;
  if (group.size() <= 1 || !(moved > 0 || kind == CollectiveKind::kBarrier)) return schedule;
  // The tuning's efficiency (a measured curve, or 1) times the stack's share of the tier.
  const double efficiency = tuning.efficiency_at(moved) * model.tuning.fraction(tier);
  const bool nccl_protocols = model.tuning.nccl_protocols && tier == Tier::kInterNode &&
                              !model.tuning.calibrated(kind, algorithm, tier) &&
                              (algorithm == Algorithm::kRing || algorithm == Algorithm::kTree);
  if (!nccl_protocols) {
    schedule.phases =
        finish(generate(kind, algorithm, group, moved, root, StepLatency(model.topology, tuning)), efficiency,
               tuning.base_latency_s);
    return schedule;
  }
  double best_s = std::numeric_limits<double>::infinity();
  for (const ProtocolCost& protocol : protocol_costs(algorithm)) {
    const StepLatency step(model.topology, tuning, &protocol);
    CollectiveSchedule candidate = schedule;
    candidate.protocol = protocol.protocol;
    candidate.phases =
        finish(generate(kind, algorithm, group, moved, root, step), efficiency * protocol.bandwidth_factor,
               tuning.base_latency_s + protocol.base_latency_s);
    const double estimate = estimate_duration_s(candidate, model);
    if (estimate < best_s) {
      best_s = estimate;
      schedule = std::move(candidate);
    }
  }
  return schedule;
}

}  // namespace

double estimate_duration_s(const CollectiveSchedule& schedule, const CollectiveModel& model) {
  const TopologyView& topology = model.topology;
  double total = 0;
  for (const Phase& phase : schedule.phases) {
    // Bytes each GPU sends and receives inside its node and across nodes.
    std::map<int, std::array<double, 4>> load;
    for (const Flow& f : phase.flows) {
      const bool inter = topology.node_of(f.src_gpu) != topology.node_of(f.dst_gpu);
      load[f.src_gpu][inter ? 2 : 0] += f.bytes;
      load[f.dst_gpu][inter ? 3 : 1] += f.bytes;
    }
    double busiest = 0;
    for (const auto& [gpu, bytes] : load) {
      const double intra = std::max(bytes[0], bytes[1]) / topology.intra_bandwidth_bytes_per_s;
      const double inter = std::max(bytes[2], bytes[3]) / topology.inter_bandwidth_bytes_per_s;
      busiest =
          std::max({busiest, bytes[0] + bytes[1] > 0 ? intra : 0.0, bytes[2] + bytes[3] > 0 ? inter : 0.0});
    }
    total += phase.latency_s + busiest;
  }
  return total;
}

CollectiveSchedule plan_collective(CollectiveKind kind, const std::vector<int>& members, double bytes,
                                   const CollectiveModel& model, Algorithm algorithm, int root) {
  if (!(bytes >= 0)) throw CollectiveError(fmt::format("a collective cannot move {} bytes", bytes));
  const Group group = internal::make_group(members, model.topology);
  if (root < 0 || root >= group.size()) {
    throw CollectiveError(fmt::format("root {} is not a member index (0 to {})", root, group.size() - 1));
  }
  if (algorithm != Algorithm::kAuto) {
    const std::vector<Algorithm> choices = implemented(kind);
    if (std::find(choices.begin(), choices.end(), algorithm) == choices.end()) {
      std::string names;
      for (const Algorithm a : choices) names += fmt::format("{}{}", names.empty() ? "" : ", ", to_string(a));
      throw CollectiveError(fmt::format("{} is not implemented with the {} algorithm (choose auto or {})",
                                        config::to_string(kind), to_string(algorithm), names));
    }
    if (algorithm == Algorithm::kNvls && !model.topology.nvls) {
      throw CollectiveError(
          "nvls needs NVSwitch in-network reduction: the topology's node.intra.nvls is false");
    }
    return build(kind, algorithm, group, bytes, root, model);
  }
  CollectiveSchedule best;
  double best_s = std::numeric_limits<double>::infinity();
  for (const Algorithm candidate : auto_candidates(kind, group, bytes, model.topology)) {
    CollectiveSchedule schedule = build(kind, candidate, group, bytes, root, model);
    const double estimate = estimate_duration_s(schedule, model);
    if (estimate < best_s) {
      best_s = estimate;
      best = std::move(schedule);
    }
  }
  return best;
}

CollectiveSchedule plan_point_to_point(int src_gpu, int dst_gpu, double bytes, const CollectiveModel& model) {
  if (src_gpu == dst_gpu) {
    throw CollectiveError(fmt::format("a transfer from GPU {} to itself moves nothing", src_gpu));
  }
  if (!(bytes >= 0)) throw CollectiveError(fmt::format("a transfer cannot move {} bytes", bytes));
  const Group group = internal::make_group({src_gpu, dst_gpu}, model.topology);
  const Tier tier = group.nodes.size() > 1 ? Tier::kInterNode : Tier::kIntraNode;
  const AlgorithmTuning& tuning = model.tuning.of(CollectiveKind::kSendRecv, Algorithm::kDirect, tier);
  const StepLatency step(model.topology, tuning);
  Phase phase;
  phase.flows.push_back(Flow{src_gpu, dst_gpu, bytes});
  phase.latency_s = step.longest(phase.flows);
  CollectiveSchedule schedule{
      CollectiveKind::kSendRecv, Algorithm::kDirect, group.members, bytes, {}, std::nullopt};
  schedule.phases =
      finish({phase}, tuning.efficiency_at(bytes) * model.tuning.fraction(tier), tuning.base_latency_s);
  return schedule;
}

}  // namespace trainsim::cost
