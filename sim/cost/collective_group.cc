// Grouping of collective members by node and the per-step latency of an algorithm.
#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "sim/cost/collective_algorithms.h"

namespace trainsim::cost::internal {

bool Group::uniform() const {
  return std::all_of(nodes.begin(), nodes.end(),
                     [&](const std::vector<int>& n) { return n.size() == nodes[0].size(); });
}

Group make_group(const std::vector<int>& members, const TopologyView& topology) {
  if (members.empty()) throw CollectiveError("a collective needs at least one member GPU");
  Group group;
  group.members = members;
  std::set<int> seen;
  std::map<int, size_t> slot_of_node;
  for (const int gpu : members) {
    if (gpu < 0 || gpu >= topology.gpu_count) {
      throw CollectiveError(
          fmt::format("GPU {} does not exist (GPUs are 0 to {})", gpu, topology.gpu_count - 1));
    }
    if (!seen.insert(gpu).second) {
      throw CollectiveError(fmt::format("GPU {} appears twice among the members", gpu));
    }
    const auto [it, inserted] = slot_of_node.try_emplace(topology.node_of(gpu), group.nodes.size());
    if (inserted) group.nodes.emplace_back();
    group.nodes[it->second].push_back(gpu);
  }
  if (group.nodes.size() > 1) {
    for (const std::vector<int>& n : group.nodes) {
      group.channels = std::max(group.channels, static_cast<int>(n.size()));
    }
  }
  return group;
}

double StepLatency::edge_s(const Flow& flow) const {
  const double path_s = topology_.path_latency_s(flow.src_gpu, flow.dst_gpu);
  if (protocol_ == nullptr) return path_s;
  const bool across = topology_.node_of(flow.src_gpu) != topology_.node_of(flow.dst_gpu);
  return std::max(path_s, across ? protocol_->inter_step_s : protocol_->intra_step_s);
}

double StepLatency::longest(const std::vector<Flow>& flows) const {
  double longest = 0;
  for (const Flow& f : flows) longest = std::max(longest, edge_s(f));
  return longest + tuning_.step_latency_s;
}

double StepLatency::mean(const std::vector<Flow>& flows) const {
  double total = 0;
  for (const Flow& f : flows) total += edge_s(f);
  return (flows.empty() ? 0.0 : total / static_cast<double>(flows.size())) + tuning_.step_latency_s;
}

int btree_parent(int rank, int n) {
  if (rank == 0) return -1;
  const int bit = rank & -rank;
  const int up = (rank ^ bit) | (bit << 1);
  return up >= n ? rank ^ bit : up;
}

int dtree_parent(int tree, int rank, int n) {
  if (tree == 0) return btree_parent(rank, n);
  if (n % 2 == 0) {
    const int parent = btree_parent(n - 1 - rank, n);
    return parent < 0 ? -1 : n - 1 - parent;
  }
  const int parent = btree_parent((rank - 1 + n) % n, n);
  return parent < 0 ? -1 : (parent + 1) % n;
}

}  // namespace trainsim::cost::internal
