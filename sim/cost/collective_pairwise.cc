// Point-to-point patterns: pairwise all-to-all and the nccl-tests send/recv ring shift.
#include "sim/cost/collective_algorithms.h"

namespace trainsim::cost::internal {

std::vector<Phase> pairwise_phases(const Group& group, double bytes, const StepLatency& step) {
  const int n = group.size();
  Phase phase;
  for (int i = 0; i < n; ++i) {
    for (int r = 1; r < n; ++r) {
      phase.flows.push_back({group.members[i], group.members[(i + r) % n], bytes / n});
    }
  }
  phase.latency_s = (n - 1) * step.mean(phase.flows);
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
