// Hierarchical all-reduce, all-gather and reduce-scatter: NVLink rings inside the nodes, rings
// between the nodes on each local rank ("rail"), in two or three phases.
#include <fmt/format.h>

#include "sim/cost/collective_algorithms.h"

namespace trainsim::cost::internal {
namespace {

// Ring flows inside every node, `bytes` per edge; `steps` steps.
Phase intra_ring(const Group& group, double bytes, int steps, const StepLatency& step) {
  Phase phase;
  for (const std::vector<int>& node : group.nodes) {
    const size_t g = node.size();
    if (g < 2) continue;
    for (size_t i = 0; i < g; ++i) phase.flows.push_back({node[i], node[(i + 1) % g], bytes});
  }
  phase.latency_s = steps * step.mean(phase.flows);
  return phase;
}

// Ring flows between the nodes, one ring per local rank, `bytes` per edge; `steps` steps.
Phase inter_ring(const Group& group, double bytes, int steps, const StepLatency& step) {
  Phase phase;
  const size_t n = group.nodes.size();
  if (n > 1) {
    for (size_t l = 0; l < group.nodes[0].size(); ++l) {
      for (size_t k = 0; k < n; ++k) {
        phase.flows.push_back({group.nodes[k][l], group.nodes[(k + 1) % n][l], bytes});
      }
    }
  }
  phase.latency_s = steps * step.mean(phase.flows);
  return phase;
}

}  // namespace

std::vector<Phase> hierarchical_phases(CollectiveKind kind, const Group& group, double bytes,
                                       const StepLatency& step) {
  if (!group.uniform()) {
    throw CollectiveError(
        "the hierarchical algorithm needs the same number of member GPUs on every node; use ring or tree");
  }
  const double g = static_cast<double>(group.nodes[0].size());
  const double n = static_cast<double>(group.nodes.size());
  const int gi = static_cast<int>(g);
  const int ni = static_cast<int>(n);
  switch (kind) {
    case CollectiveKind::kAllReduce:
      return {intra_ring(group, (g - 1) / g * bytes, gi - 1, step),
              inter_ring(group, 2 * (n - 1) / n * bytes / g, 2 * (ni - 1), step),
              intra_ring(group, (g - 1) / g * bytes, gi - 1, step)};
    case CollectiveKind::kAllGather:
      return {inter_ring(group, (n - 1) / n * bytes / g, ni - 1, step),
              intra_ring(group, (g - 1) / g * bytes, gi - 1, step)};
    case CollectiveKind::kReduceScatter:
      return {intra_ring(group, (g - 1) / g * bytes, gi - 1, step),
              inter_ring(group, (n - 1) / n * bytes / g, ni - 1, step)};
    default:
      throw CollectiveError(
          fmt::format("the hierarchical algorithm does not implement {}", config::to_string(kind)));
  }
}

}  // namespace trainsim::cost::internal
