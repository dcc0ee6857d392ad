// NVLS (NVLink SHARP) all-reduce inside one NVSwitch node. The switch reduces the GPUs' pushed
// data and multicasts the result, so every GPU link carries about S(N+1)/N each way once, instead
// of the ring's 2(N-1)/N S. The traffic through the switch is represented by flows from each GPU
// to the next (each GPU link then carries exactly that volume each way); two switch traversals
// of latency.
#include <fmt/format.h>

#include "sim/cost/collective_algorithms.h"

namespace trainsim::cost::internal {

std::vector<Phase> nvls_phases(const Group& group, double bytes, const StepLatency& step) {
  if (group.nodes.size() != 1) {
    throw CollectiveError(
        fmt::format("nvls works inside one node; these {} GPUs span {} nodes (use ring or tree)",
                    group.size(), group.nodes.size()));
  }
  const int n = group.size();
  Phase phase;
  if (n > 1) {
    for (int i = 0; i < n; ++i) {
      phase.flows.push_back({group.members[i], group.members[(i + 1) % n], bytes * (n + 1) / n});
    }
  }
  phase.latency_s = 2 * step.longest(phase.flows);
  return {phase};
}

}  // namespace trainsim::cost::internal
