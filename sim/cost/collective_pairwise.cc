// Point-to-point patterns: pairwise all-to-all and the nccl-tests send/recv ring shift.
#include "sim/cost/collective_algorithms.h"

namespace trainsim::cost::internal {

std::vector<Phase> pairwise_phases(const Group& group, double bytes, const StepLatency& step) {
  const int n = group.size();
  const double share = bytes / n;
  // Every ordered pair, for the latency: N-1 steps of the mean path latency.
  Phase pairs;
  for (int i = 0; i < n; ++i) {
    for (int r = 1; r < n; ++r) pairs.flows.push_back({group.members[i], group.members[(i + r) % n], share});
  }
  // The flows. Across nodes, one flow per source GPU and destination node, to the destination's
  // member of the same local position (rail-aligned, as NCCL's PXN sends through the NIC on the
  // destination's rail), carrying what the source sends that node's members: each GPU's NIC sends
  // and receives what it would with the N(N-1) pair flows (exactly when the nodes hold equally many
  // members), in N x nodes flows instead. Inside a node every pair, except behind an NVSwitch, where
  // each GPU's port is the only link its traffic crosses: one flow to the next member carries what
  // the GPU sends all the others, so every port sends and receives exactly what the pairs would.
  Phase phase;
  phase.latency_s = (n - 1) * step.mean(pairs.flows);
  const bool switched = step.topology().intra_switched;
  for (const std::vector<int>& from : group.nodes) {
    for (const std::vector<int>& to : group.nodes) {
      for (size_t a = 0; a < from.size(); ++a) {
        if (&from == &to && switched) {
          const size_t peers = to.size() - 1;
          if (peers > 0)
            phase.flows.push_back({from[a], to[(a + 1) % to.size()], share * static_cast<double>(peers)});
        } else if (&from == &to) {
          for (size_t b = 0; b < to.size(); ++b) {
            if (a != b) phase.flows.push_back({from[a], to[b], share});
          }
        } else {
          phase.flows.push_back({from[a], to[a % to.size()], share * static_cast<double>(to.size())});
        }
      }
    }
  }
  return {phase};
}

std::vector<Phase> direct_phases(const Group& group, double bytes, const StepLatency& step) {
  const int n = group.size();
  Phase phase;
  if (n > 1) {
    for (int i = 0; i < n; ++i) phase.flows.push_back({group.members[i], group.members[(i + 1) % n], bytes});
  }
  phase.latency_s = step.longest(phase.flows);
  return {phase};
}

}  // namespace trainsim::cost::internal
