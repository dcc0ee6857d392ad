// Ring algorithms: all-reduce, all-gather and reduce-scatter around C rings, broadcast and reduce
// as pipelined chains along them.
#include <algorithm>

#include "sim/cost/collective_algorithms.h"

namespace trainsim::cost::internal {
namespace {

// Ring `channel`: every node's members rotated by the channel number, nodes in order, so each
// channel enters and leaves a node through different GPUs (and so NICs).
std::vector<int> ring_order(const Group& group, int channel) {
  std::vector<int> order;
  for (const std::vector<int>& node : group.nodes) {
    const size_t shift = static_cast<size_t>(channel) % node.size();
    order.insert(order.end(), node.begin() + static_cast<std::ptrdiff_t>(shift), node.end());
    order.insert(order.end(), node.begin(), node.begin() + static_cast<std::ptrdiff_t>(shift));
  }
  return order;
}

}  // namespace

std::vector<Phase> ring_phases(CollectiveKind kind, const Group& group, double bytes, int root,
                               const StepLatency& step) {
  const int n = group.size();
  const double per_channel = bytes / group.channels;
  Phase phase;
  int steps = n - 1;
  double step_latency = 0;  // the slowest channel's
  for (int c = 0; c < group.channels; ++c) {
    std::vector<int> order = ring_order(group, c);
    const size_t first = phase.flows.size();
    switch (kind) {
      case CollectiveKind::kAllReduce:
        steps = 2 * (n - 1);
        for (int i = 0; i < n; ++i) {
          phase.flows.push_back({order[i], order[(i + 1) % n], 2.0 * (n - 1) / n * per_channel});
        }
        break;
      case CollectiveKind::kAllGather:
      case CollectiveKind::kReduceScatter:
        for (int i = 0; i < n; ++i) {
          phase.flows.push_back({order[i], order[(i + 1) % n], 1.0 * (n - 1) / n * per_channel});
        }
        break;
      case CollectiveKind::kBroadcast:
      case CollectiveKind::kReduce: {
        std::rotate(order.begin(),
                    std::find(order.begin(), order.end(), group.members[static_cast<size_t>(root)]),
                    order.end());
        for (int i = 0; i + 1 < n; ++i) {
          const bool down = kind == CollectiveKind::kBroadcast;
          phase.flows.push_back(
              {down ? order[i] : order[i + 1], down ? order[i + 1] : order[i], per_channel});
        }
        break;
      }
      default:
        throw CollectiveError(std::string("the ring algorithm does not implement ") +
                              std::string(config::to_string(kind)));
    }
    const std::vector<Flow> channel(phase.flows.begin() + static_cast<std::ptrdiff_t>(first),
                                    phase.flows.end());
    step_latency = std::max(step_latency, step.mean(channel));
  }
  phase.latency_s = steps * step_latency;
  return {phase};
}

}  // namespace trainsim::cost::internal
