// Internal to sim/cost: the phase generators of each collective algorithm (see collective.h for
// what each one does). Generators emit flows with their ideal byte counts and phases with their
// latency; plan_collective (collective_plan.cc) then merges flows that share a (source,
// destination), drops empty ones, applies the tuning's efficiency and base latency.
#ifndef TRAINSIM_SIM_COST_COLLECTIVE_ALGORITHMS_H_
#define TRAINSIM_SIM_COST_COLLECTIVE_ALGORITHMS_H_

#include <vector>

#include "sim/cost/collective.h"
#include "sim/cost/nccl_protocol.h"

namespace trainsim::cost::internal {

// The members of a collective grouped by node, nodes in order of first appearance and members in
// the order given.
struct Group {
  std::vector<int> members;
  std::vector<std::vector<int>> nodes;
  int channels = 1;  // the most members on one node when there are several nodes, else 1

  int size() const { return static_cast<int>(members.size()); }
  // Every node has the same number of members.
  bool uniform() const;
};

// Validates `members` (non-empty, distinct, existing GPUs; CollectiveError otherwise) and groups
// them.
Group make_group(const std::vector<int>& members, const TopologyView& topology);

// Latency of one algorithm step over `flows`, plus the tuning's per-step latency (alone when there
// are no flows). An edge's latency is its path latency or, under an NCCL protocol, the longer of that
// and the protocol's step latency over NVLink or through the network. `longest`: the longest edge latency
// among them, for steps that wait for all of them. `mean`: their average, for a ring, where a chunk crosses
// the edges one after the other so that the latency of N steps is the sum over the ring's edges.
class StepLatency {
 public:
  // `protocol`, when given, must outlive this object.
  StepLatency(const TopologyView& topology, const AlgorithmTuning& tuning,
              const ProtocolCost* protocol = nullptr)
      : topology_(topology), tuning_(tuning), protocol_(protocol) {}
  double longest(const std::vector<Flow>& flows) const;
  double mean(const std::vector<Flow>& flows) const;
  const TopologyView& topology() const { return topology_; }

 private:
  double edge_s(const Flow& flow) const;

  const TopologyView& topology_;
  const AlgorithmTuning& tuning_;
  const ProtocolCost* protocol_;
};

std::vector<Phase> ring_phases(CollectiveKind kind, const Group& group, double bytes, int root,
                               const StepLatency& step);
std::vector<Phase> tree_phases(const Group& group, double bytes, const StepLatency& step);
std::vector<Phase> hierarchical_phases(CollectiveKind kind, const Group& group, double bytes,
                                       const StepLatency& step);
std::vector<Phase> nvls_phases(const Group& group, double bytes, const StepLatency& step);
std::vector<Phase> pairwise_phases(const Group& group, double bytes, const StepLatency& step);
std::vector<Phase> direct_phases(const Group& group, double bytes, const StepLatency& step);

// NCCL's binary tree over ranks 0..n-1 (rooted at 0): the parent of `rank`, -1 for the root.
int btree_parent(int rank, int n);
// The second tree of the double binary tree: mirrored (even n) or shifted by one (odd n), so that
// the leaves of one tree are inner ranks of the other.
int dtree_parent(int tree, int rank, int n);

}  // namespace trainsim::cost::internal

#endif  // TRAINSIM_SIM_COST_COLLECTIVE_ALGORITHMS_H_
