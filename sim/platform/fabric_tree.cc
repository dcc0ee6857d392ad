// Fat trees and rail-optimized fabrics, as trees of trunks (Leiserson's fat tree): k nodes hang
// off each leaf switch, k switches of one level hang off each switch of the next, and the link
// from a switch to its parent is one trunk whose bandwidth is the sum of what it aggregates (divided
// by the oversubscription at the leaf; non-blocking above). With routing adaptive a trunk stands for
// the parallel cables of a folded Clos with perfect load balancing: every flow crossing it shares
// its whole bandwidth. With ecmp or d-mod-k the trunk is its cables, each a link of its own (the
// trunk's bandwidth split evenly, so every routing has the same capacity), and a flow takes one
// cable per level: ecmp the one hash(seed, source and destination endpoint, level) picks, modulo
// the cables; d-mod-k (Zahavi's destination-mod-k) cable (d / w_1 / ... / w_{l-1}) mod w_l at level
// l, for the destination NIC's index d (within its rail on a rail-optimized fabric) and w_i cables
// per trunk at level i, so the NICs of one leaf are reached over distinct cables. A flow going up
// cable j at a level comes down cable j of the destination's trunk at that level (cable j of every
// switch below leads to the same parent switch j of a folded Clos), so two flows collide on a cable
// when their picks agree, and then share it. One path per GPU pair: a connection's queue pairs all
// take the same path.
//
// The file gives the number of levels L but not the switch radix, so k is the smallest integer
// with k^L >= nodes (one switch at the top level).
//
// Rail-optimized: NIC r of every node hangs off the leaves of rail r; rails join at level 2.
// Traffic between GPUs on different rails first crosses the node's NVLink to the GPU on the
// destination's rail (NCCL's PXN), so it never needs the upper levels to change rails.
#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "sim/common/random.h"
#include "sim/config/limits.h"
#include "sim/platform/fabric.h"
#include "sim/platform/invariant.h"

namespace trainsim::platform::internal {
namespace {

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Smallest k >= 1 with k^levels >= nodes.
int64_t nodes_per_leaf(int64_t nodes, int levels) {
  int64_t k = std::max<int64_t>(
      1, static_cast<int64_t>(std::floor(std::pow(static_cast<double>(nodes), 1.0 / levels))));
  while (std::pow(static_cast<double>(k), levels) < static_cast<double>(nodes)) ++k;
  while (k > 1 && std::pow(static_cast<double>(k - 1), levels) >= static_cast<double>(nodes)) --k;
  return k;
}

class TreeFabric : public FabricRouting {
 public:
  TreeFabric(const config::Topology& topology, const NodeLayout& layout, GraphStore& store);

  void append_route(int src_node, int src_nic, int dst_node, int dst_nic, uint64_t flow_key,
                    std::vector<Hop>& out) const override;
  double bisection_bandwidth_bytes_per_s() const override { return bisection_bytes_per_s_; }
  std::string description() const override { return description_; }

 private:
  struct Switch {
    VertexId vertex = 0;
    int parent = -1;
    int uplink = -1;  // the first link to the parent, child first
    int uplinks = 0;  // links to the parent, consecutive: 1 trunk, or its cables (ecmp, d-mod-k)
    double up_bandwidth_bytes_per_s = 0;
  };

  int add_switch(GraphStore& store, std::string name) {
    switches_.push_back(Switch{store.add_vertex(Vertex{VertexKind::kSwitch, std::move(name), -1})});
    return static_cast<int>(switches_.size()) - 1;
  }
  void connect(GraphStore& store, int child, int parent, const config::Fabric& fabric);

  // The cable a flow takes at level `level`, before the modulo by the trunk's cables: from its ECMP
  // hash, or the destination's index over the product of the cables of the levels below (d-mod-k).
  uint64_t pick(uint64_t level, uint64_t flow_hash, uint64_t destination) const;

  int nics_ = 0;
  bool rails_ = false;
  config::FabricRouting routing_ = config::FabricRouting::kAdaptive;
  uint64_t ecmp_seed_ = 0;
  int64_t cable_links_ = 0;  // with a routing that picks cables
  std::vector<Switch> switches_;
  std::vector<int> leaf_of_nic_;    // [node * nics + nic]
  std::vector<int> attach_of_nic_;  // link NIC -> leaf, NIC first
  double bisection_bytes_per_s_ = 0;
  std::string description_;
};

TreeFabric::TreeFabric(const config::Topology& topology, const NodeLayout& layout, GraphStore& store) {
  const config::Fabric& fabric = topology.fabric;
  const bool rails = fabric.kind == config::FabricKind::kRailOptimized;
  const int64_t nodes = fabric.nodes;
  const int levels = fabric.levels;
  const int64_t k = nodes_per_leaf(nodes, levels);
  nics_ = layout.nics();
  rails_ = rails;
  routing_ = fabric.routing;
  ecmp_seed_ = static_cast<uint64_t>(fabric.ecmp_seed);
  const int64_t rail_count = rails ? nics_ : 1;
  const int64_t leaves_per_rail = ceil_div(nodes, k);
  const double nic_bandwidth = topology.node.nics.link.bandwidth_bytes_per_s;
  const int64_t nics_per_leaf_and_node = rails ? 1 : nics_;

  // Level 1: the leaves, rail-major.
  std::vector<int> level;
  for (int64_t r = 0; r < rail_count; ++r) {
    for (int64_t i = 0; i < leaves_per_rail; ++i) {
      const std::string name =
          rails ? fmt::format("fabric/rail{}/leaf{}", r, i) : fmt::format("fabric/l1/sw{}", i);
      const int s = add_switch(store, name);
      const int64_t attached = std::min(k, nodes - i * k);
      switches_[s].up_bandwidth_bytes_per_s =
          static_cast<double>(attached * nics_per_leaf_and_node) * nic_bandwidth / fabric.oversubscription;
      level.push_back(s);
    }
  }
  leaf_of_nic_.assign(static_cast<size_t>(nodes * nics_), -1);
  attach_of_nic_.assign(static_cast<size_t>(nodes * nics_), -1);
  for (int64_t n = 0; n < nodes; ++n) {
    for (int c = 0; c < nics_; ++c) {
      const int64_t rail = rails ? c : 0;
      const int leaf = level[static_cast<size_t>(rail * leaves_per_rail + n / k)];
      const size_t slot = static_cast<size_t>(n * nics_ + c);
      leaf_of_nic_[slot] = leaf;
      attach_of_nic_[slot] =
          store.add_link(layout.nic(static_cast<int>(n), c), switches_[leaf].vertex, LinkKind::kNic,
                         nic_bandwidth, topology.node.nics.link.latency_s + fabric.switch_latency_s / 2);
    }
  }

  // Levels 2..L: level 2 groups k leaf positions across all rails, higher levels k switches each.
  for (int l = 2; l <= levels; ++l) {
    const int64_t groups = l == 2 ? leaves_per_rail : static_cast<int64_t>(level.size());
    std::vector<int> next;
    for (int64_t j = 0; j < ceil_div(groups, k); ++j) {
      const int s = add_switch(store, fmt::format("fabric/l{}/sw{}", l, j));
      for (int64_t g = j * k; g < std::min(groups, (j + 1) * k); ++g) {
        if (l == 2) {
          for (int64_t r = 0; r < rail_count; ++r) {
            connect(store, level[static_cast<size_t>(r * leaves_per_rail + g)], s, fabric);
          }
        } else {
          connect(store, level[static_cast<size_t>(g)], s, fabric);
        }
      }
      next.push_back(s);
    }
    level = std::move(next);
  }

  const double injection = node_injection_bandwidth_bytes_per_s(topology);
  const double half = static_cast<double>(nodes) / 2;
  // Halves of whole leaves: every leaf's uplink is cut, so half the nodes' injection gets through,
  // divided by the oversubscription when there are uplinks at all.
  if (nodes > 1) {
    bisection_bytes_per_s_ = half * injection / (leaves_per_rail > 1 ? fabric.oversubscription : 1.0);
  }
  const auto plural = [](int64_t count, std::string_view one, std::string_view many) {
    return fmt::format("{} {}", count, count == 1 ? one : many);
  };
  description_ = fmt::format("{}{}, {}, {} per leaf, {}, oversubscription {}:1", to_string(fabric.kind),
                             rails ? fmt::format(" ({})", plural(rail_count, "rail", "rails")) : "",
                             plural(levels, "level", "levels"), plural(k, "node", "nodes"),
                             plural(static_cast<int64_t>(switches_.size()), "switch", "switches"),
                             fabric.oversubscription);
  if (routing_ == config::FabricRouting::kEcmp) {
    description_ +=
        fmt::format(", ECMP over {} (seed {})", plural(cable_links_, "cable", "cables"), fabric.ecmp_seed);
  } else if (routing_ == config::FabricRouting::kDModK) {
    description_ += fmt::format(", D-mod-K over {}", plural(cable_links_, "cable", "cables"));
  }
}

void TreeFabric::connect(GraphStore& store, int child, int parent, const config::Fabric& fabric) {
  Switch& c = switches_[static_cast<size_t>(child)];
  const double bandwidth = c.up_bandwidth_bytes_per_s;
  // Saturated: a trunk of more than 2^31 - 1 cables is reported as that many.
  const int cables =
      static_cast<int>(std::clamp(std::ceil(bandwidth / fabric.link.bandwidth_bytes_per_s - 1e-9), 1.0,
                                  static_cast<double>(std::numeric_limits<int>::max())));
  const VertexId up = switches_[static_cast<size_t>(parent)].vertex;
  const double latency = fabric.link.latency_s + fabric.switch_latency_s;
  c.parent = parent;
  if (routing_ != config::FabricRouting::kAdaptive) {
    cable_links_ += cables;
    TRAINSIM_PLATFORM_CHECK(cable_links_ <= config::kMaxFabricCables,
                            "routing needs more than {} cables (the topology loader bounds them)",
                            config::kMaxFabricCables);
    c.uplinks = cables;
    for (int j = 0; j < cables; ++j) {
      const int link = store.add_link(c.vertex, up, LinkKind::kFabric, bandwidth / cables, latency, 1, j);
      if (j == 0) c.uplink = link;
    }
  } else {
    c.uplinks = 1;
    c.uplink = store.add_link(c.vertex, up, LinkKind::kFabric, bandwidth, latency, cables);
  }
  switches_[static_cast<size_t>(parent)].up_bandwidth_bytes_per_s += bandwidth;
}

void TreeFabric::append_route(int src_node, int src_nic, int dst_node, int dst_nic, uint64_t flow_key,
                              std::vector<Hop>& out) const {
  const size_t src = static_cast<size_t>(src_node * nics_ + src_nic);
  const size_t dst = static_cast<size_t>(dst_node * nics_ + dst_nic);
  out.push_back(Hop{attach_of_nic_[src], true});
  std::vector<Hop> down;
  int a = leaf_of_nic_[src];
  int b = leaf_of_nic_[dst];
  const uint64_t flow_hash =
      routing_ == config::FabricRouting::kEcmp ? splitmix64(ecmp_seed_ ^ splitmix64(flow_key)) : 0;
  uint64_t destination = static_cast<uint64_t>(rails_ ? dst_node : dst_node * nics_ + dst_nic);
  for (uint64_t level = 1; a != b; ++level) {
    const Switch& up = switches_[static_cast<size_t>(a)];
    const Switch& other = switches_[static_cast<size_t>(b)];
    TRAINSIM_PLATFORM_CHECK(up.parent >= 0 && other.parent >= 0,
                            "no common switch between NIC {} of node {} and NIC {} of node {}", src_nic,
                            src_node, dst_nic, dst_node);
    const uint64_t cable = pick(level, flow_hash, destination);
    out.push_back(Hop{up.uplink + static_cast<int>(cable % static_cast<uint64_t>(up.uplinks)), true});
    down.push_back(Hop{other.uplink + static_cast<int>(cable % static_cast<uint64_t>(other.uplinks)), true});
    destination /= static_cast<uint64_t>(up.uplinks);
    a = up.parent;
    b = other.parent;
  }
  append_reversed(down, out);
  out.push_back(Hop{attach_of_nic_[dst], false});
}

uint64_t TreeFabric::pick(uint64_t level, uint64_t flow_hash, uint64_t destination) const {
  switch (routing_) {
    case config::FabricRouting::kAdaptive:
      return 0;
    case config::FabricRouting::kEcmp:
      return splitmix64(flow_hash + level);
    case config::FabricRouting::kDModK:
      return destination;
  }
  return 0;
}

}  // namespace

std::unique_ptr<FabricRouting> build_tree_fabric(const config::Topology& topology, const NodeLayout& layout,
                                                 GraphStore& store) {
  return std::make_unique<TreeFabric>(topology, layout, store);
}

}  // namespace trainsim::platform::internal
