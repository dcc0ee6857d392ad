// NCCL's tree all-reduce: per channel, a chain through each node's members and a double binary
// tree between the chains' heads; data is reduced up and broadcast down at the same time.
#include <algorithm>

#include "sim/cost/collective_algorithms.h"

namespace trainsim::cost::internal {
namespace {

int depth(int tree, int rank, int n) {
  int d = 0;
  for (int r = rank; dtree_parent(tree, r, n) >= 0; r = dtree_parent(tree, r, n)) ++d;
  return d;
}

}  // namespace

std::vector<Phase> tree_phases(const Group& group, double bytes, const StepLatency& step) {
  const int nodes = static_cast<int>(group.nodes.size());
  const double per_channel = bytes / group.channels;
  std::vector<Flow> chain;
  std::vector<Flow> tree;
  size_t longest_chain = 0;
  for (int c = 0; c < group.channels; ++c) {
    std::vector<int> heads;
    for (const std::vector<int>& node : group.nodes) {
      const size_t shift = static_cast<size_t>(c) % node.size();
      std::vector<int> order(node.begin() + static_cast<std::ptrdiff_t>(shift), node.end());
      order.insert(order.end(), node.begin(), node.begin() + static_cast<std::ptrdiff_t>(shift));
      for (size_t j = 0; j + 1 < order.size(); ++j) {
        chain.push_back({order[j + 1], order[j], per_channel});  // reduce towards the head
        chain.push_back({order[j], order[j + 1], per_channel});  // broadcast away from it
      }
      longest_chain = std::max(longest_chain, order.size());
      heads.push_back(order.front());
    }
    for (int t = 0; t < 2 && nodes > 1; ++t) {
      for (int r = 0; r < nodes; ++r) {
        const int parent = dtree_parent(t, r, nodes);
        if (parent < 0) continue;
        tree.push_back({heads[r], heads[parent], per_channel / 2});
        tree.push_back({heads[parent], heads[r], per_channel / 2});
      }
    }
  }
  int tree_depth = 0;
  for (int t = 0; t < 2 && nodes > 1; ++t) {
    for (int r = 0; r < nodes; ++r) tree_depth = std::max(tree_depth, depth(t, r, nodes));
  }
  Phase phase;
  const double chain_steps = static_cast<double>(longest_chain) - 1;
  phase.latency_s = 2 * (tree_depth * (tree.empty() ? 0 : step.longest(tree)) +
                         chain_steps * (chain.empty() ? 0 : step.longest(chain)));
  phase.flows = std::move(chain);
  phase.flows.insert(phase.flows.end(), tree.begin(), tree.end());
  return {phase};
}

}  // namespace trainsim::cost::internal
