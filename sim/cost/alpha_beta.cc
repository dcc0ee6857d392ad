#include "sim/cost/alpha_beta.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "sim/cost/nccl_protocol.h"

namespace trainsim::cost {

double collective_s(workload::CollectiveKind kind, int64_t ranks, double bytes, const IdealLinks& links) {
  if (ranks <= 1) return 0;
  const double n = static_cast<double>(ranks);
  const double a = links.latency_s;
  const double b = links.bandwidth_bytes_per_s;
  switch (kind) {
    case workload::CollectiveKind::kAllReduce:
      return 2 * (n - 1) / n * bytes / b + 2 * (n - 1) * a;
    case workload::CollectiveKind::kAllGather:
    case workload::CollectiveKind::kReduceScatter:
    case workload::CollectiveKind::kAllToAll:
      return (n - 1) / n * bytes / b + (n - 1) * a;
    case workload::CollectiveKind::kBarrier:
      return 2 * (n - 1) * a;
  }
  return 0;
}

namespace {

// NCCL's tree all-reduce of `moved` bytes over `group` (m members on each node), under its fastest
// protocol: a chain through each node's m members, a double binary tree of depth ceil(log2 k)
// between the k nodes' chain heads, reduced up and broadcast down at once. Every GPU heads one
// channel's chain, so its NIC carries S/(2m) per tree edge it has: 2S/m as an inner node of one tree
// and a leaf of the other, S/m between two nodes (root of one tree, leaf of the other); its NVLink
// about 2S(m-1)/m.
double tree_s(double moved, int64_t m, const GroupLinks& group) {
  const auto per_node = static_cast<double>(m);
  const double nic_bytes = (group.nodes == 2 ? 1 : 2) * moved / per_node;
  const double transfer_s =
      std::max(nic_bytes / group.links.bandwidth_bytes_per_s,
               2 * moved * (per_node - 1) / per_node / group.intra.bandwidth_bytes_per_s);
  const double depth = std::ceil(std::log2(static_cast<double>(group.nodes)));
  double best_s = std::numeric_limits<double>::infinity();
  for (const ProtocolCost& protocol : protocol_costs(Algorithm::kTree)) {
    const double latency_s = protocol.base_latency_s +
                             2 * ((per_node - 1) * std::max(group.intra.latency_s, protocol.intra_step_s) +
                                  depth * std::max(group.links.latency_s, protocol.inter_step_s));
    best_s = std::min(best_s, latency_s + transfer_s / protocol.bandwidth_factor);
  }
  return best_s;
}

}  // namespace

double collective_s(workload::CollectiveKind kind, int64_t ranks, double bytes, const GroupLinks& group) {
  const int64_t m = std::min(group.per_node, ranks);
  if (m >= ranks) return collective_s(kind, ranks, bytes, group.links);
  if (kind == workload::CollectiveKind::kAllToAll) {
    const double n = static_cast<double>(ranks);
    const double within = static_cast<double>(m - 1) / n * bytes / group.intra.bandwidth_bytes_per_s;
    const double across = static_cast<double>(ranks - m) / n * bytes / group.links.bandwidth_bytes_per_s;
    return std::max(within, across) + (n - 1) * group.links.latency_s;
  }
  IdealLinks ring = group.links;
  ring.bandwidth_bytes_per_s =
      std::min(group.intra.bandwidth_bytes_per_s, static_cast<double>(m) * group.links.bandwidth_bytes_per_s);
  // Under NCCL's fastest protocol for it: of a lap's n edges, one per node crosses to the next node
  // and the rest are NVLink; each step costs the longer of its link's and the protocol's latency.
  const auto n = static_cast<double>(ranks);
  const auto nodes = static_cast<double>(group.nodes);
  const double moved = kind == workload::CollectiveKind::kBarrier ? 0 : bytes;
  const bool all_reduce =
      kind == workload::CollectiveKind::kAllReduce || kind == workload::CollectiveKind::kBarrier;
  if (all_reduce && nccl_all_reduce_uses_tree(moved, static_cast<int>(ranks), static_cast<int>(group.nodes),
                                              group.intra.bandwidth_bytes_per_s,
                                              static_cast<double>(m) * group.links.bandwidth_bytes_per_s)) {
    return tree_s(moved, m, group);
  }
  double best_s = std::numeric_limits<double>::infinity();
  for (const ProtocolCost& protocol : protocol_costs(Algorithm::kRing)) {
    IdealLinks links = ring;
    links.bandwidth_bytes_per_s *= protocol.bandwidth_factor;
    links.latency_s = (nodes * std::max(group.links.latency_s, protocol.inter_step_s) +
                       (n - nodes) * std::max(group.intra.latency_s, protocol.intra_step_s)) /
                      n;
    best_s = std::min(best_s, protocol.base_latency_s + collective_s(kind, ranks, bytes, links));
  }
  return best_s;
}

double send_s(const IdealTiers& tiers, int64_t src, int64_t dst, double bytes) {
  const IdealLinks links = tiers.connecting({src, dst});
  return links.latency_s + bytes / links.bandwidth_bytes_per_s;
}

double copy_s(const IdealTiers& tiers, double bytes) {
  return tiers.intra.copy_latency_s + bytes / tiers.intra.copy_bandwidth_bytes_per_s;
}

GroupLinks group_links(const IdealTiers& tiers, const std::vector<int64_t>& members) {
  std::map<int64_t, int64_t> per_node;  // node -> members on it
  for (const int64_t r : members) ++per_node[r / tiers.gpus_per_node];
  int64_t fewest = static_cast<int64_t>(members.size());
  for (const auto& [node, count] : per_node) fewest = std::min(fewest, count);
  return {tiers.connecting(members), tiers.intra, fewest, static_cast<int64_t>(per_node.size())};
}

IdealLinks IdealTiers::connecting(const std::vector<int64_t>& ranks) const {
  const bool one_node = std::all_of(ranks.begin(), ranks.end(), [&](int64_t r) {
    return r / gpus_per_node == ranks.front() / gpus_per_node;
  });
  if (one_node) return intra;
  IdealLinks links = inter;
  for (const int64_t r : ranks) {
    const auto slow = slow_inter_node.find(r / gpus_per_node);
    if (slow != slow_inter_node.end()) {
      links.bandwidth_bytes_per_s = std::min(links.bandwidth_bytes_per_s, slow->second);
    }
  }
  return links;
}

IdealTiers ideal_tiers(const config::Scenario& scenario) {
  const config::NodeSpec& node = scenario.cluster.topology.node;
  const config::HostLink& host = scenario.cluster.hardware.host_link;
  IdealTiers t;
  t.intra = {node.intra.link.bandwidth_bytes_per_s, node.intra.link.latency_s, host.h2d_bandwidth_bytes_per_s,
             host.latency_s};
  t.inter = t.intra;
  t.gpus_per_node = std::max<int64_t>(node.gpus, 1);
  if (node.nics.count > 0) {
    // Each GPU's share of its node's NICs.
    const auto share = [&](double nic_bandwidth) {
      return std::min(t.intra.bandwidth_bytes_per_s,
                      nic_bandwidth * static_cast<double>(node.nics.count) / static_cast<double>(node.gpus));
    };
    t.inter.bandwidth_bytes_per_s = share(node.nics.link.bandwidth_bytes_per_s);
    t.inter.latency_s = node.nics.link.latency_s + scenario.cluster.topology.fabric.link.latency_s;
    for (const auto& [n, bandwidth] : scenario.stragglers.nic_bandwidth_by_node())
      t.slow_inter_node[n] = share(bandwidth);
  }
  // What the stack's collectives reach of each tier.
  if (const std::optional<config::StackProfile>& stack = scenario.cluster.hardware.stack) {
    t.intra.bandwidth_bytes_per_s *= stack->parameters[config::StackParameter::kCollectiveFractionNvlink];
    const double network = stack->parameters[config::StackParameter::kCollectiveFractionNetwork];
    t.inter.bandwidth_bytes_per_s =
        node.nics.count > 0 ? t.inter.bandwidth_bytes_per_s * network : t.intra.bandwidth_bytes_per_s;
    for (auto& [n, bandwidth] : t.slow_inter_node) bandwidth *= network;
  }
  return t;
}

}  // namespace trainsim::cost
