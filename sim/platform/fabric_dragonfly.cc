// Dragonfly: `groups` groups of `routers_per_group` routers; the routers of a group are fully
// connected by local links; each router has `global_links_per_router` global ports, and every
// pair of groups is joined by the same number m = floor(a * h / (groups - 1)) of global links
// (a = routers per group, h = global links per router), port q of a group sitting on router q / h.
// Every NIC of a node hangs off the node's router (`nodes_per_router` nodes per router).
//
// Routing is minimal: local hop to the router that holds the global link, global hop, local hop
// to the destination router. Among the m global links between two groups, a flow uses link
// (source node + destination node) mod m, which spreads node pairs evenly and deterministically.
#include <algorithm>

#include <fmt/format.h>

#include "sim/config/diagnostics.h"
#include "sim/platform/fabric.h"
#include "sim/platform/invariant.h"

namespace trainsim::platform::internal {
namespace {

class DragonflyFabric : public FabricRouting {
 public:
  DragonflyFabric(const config::Topology& topology, const NodeLayout& layout, GraphStore& store);

  void append_route(int src_node, int src_nic, int dst_node, int dst_nic, uint64_t /*flow_key*/,
                    std::vector<Hop>& out) const override;
  double bisection_bandwidth_bytes_per_s() const override { return bisection_bytes_per_s_; }
  std::string description() const override { return description_; }

 private:
  struct GlobalLink {
    int src_router = 0;  // router index within the source group
    int dst_router = 0;
    int link = 0;
    bool forward = true;  // crossing from the source group is the link's forward direction
  };

  int router_of_node(int node) const { return node / nodes_per_router_; }
  int group_of_router(int router) const { return router / routers_per_group_; }
  // Local hop between routers r1 != r2 of the same group.
  Hop local_hop(int r1, int r2) const;

  int nics_ = 0;
  int groups_ = 0;
  int routers_per_group_ = 0;
  int nodes_per_router_ = 0;
  int links_between_groups_ = 0;
  std::vector<VertexId> routers_;
  std::vector<std::vector<int>> local_links_;    // [router][router within group] -> link (lower first)
  std::vector<int> attach_of_nic_;               // [node * nics + nic], NIC first
  std::vector<std::vector<GlobalLink>> global_;  // [src group * groups + dst group]
  double bisection_bytes_per_s_ = 0;
  std::string description_;
};

DragonflyFabric::DragonflyFabric(const config::Topology& topology, const NodeLayout& layout,
                                 GraphStore& store) {
  const config::Fabric& fabric = topology.fabric;
  nics_ = layout.nics();
  groups_ = static_cast<int>(fabric.groups);
  routers_per_group_ = static_cast<int>(fabric.routers_per_group);
  nodes_per_router_ = static_cast<int>(fabric.nodes_per_router);
  const int global_per_router = static_cast<int>(fabric.global_links_per_router);
  const int ports_per_group = routers_per_group_ * global_per_router;
  if (groups_ > 1) {
    links_between_groups_ = ports_per_group / (groups_ - 1);
    if (links_between_groups_ == 0) {
      config::throw_config_error(
          config::Location{topology.path.string(), 0, 0}, "fabric.global_links_per_router",
          fmt::format(
              "a dragonfly of {} groups needs routers_per_group x global_links_per_router >= {} to join "
              "every pair of groups directly; it has {} x {} = {}",
              groups_, groups_ - 1, routers_per_group_, global_per_router, ports_per_group));
    }
  }
  const double link_latency = fabric.link.latency_s + fabric.switch_latency_s;
  const double link_bandwidth = fabric.link.bandwidth_bytes_per_s;

  const int routers = groups_ * routers_per_group_;
  for (int r = 0; r < routers; ++r) {
    routers_.push_back(store.add_vertex(Vertex{
        VertexKind::kSwitch, fmt::format("fabric/g{}/r{}", group_of_router(r), r % routers_per_group_), -1}));
  }
  local_links_.assign(static_cast<size_t>(routers),
                      std::vector<int>(static_cast<size_t>(routers_per_group_), -1));
  for (int g = 0; g < groups_; ++g) {
    for (int a = 0; a < routers_per_group_; ++a) {
      for (int b = a + 1; b < routers_per_group_; ++b) {
        const int ra = g * routers_per_group_ + a;
        const int rb = g * routers_per_group_ + b;
        const int link =
            store.add_link(routers_[ra], routers_[rb], LinkKind::kFabric, link_bandwidth, link_latency);
        local_links_[ra][b] = local_links_[rb][a] = link;
      }
    }
  }
  global_.assign(static_cast<size_t>(groups_ * groups_), {});
  for (int g1 = 0; g1 < groups_; ++g1) {
    for (int g2 = g1 + 1; g2 < groups_; ++g2) {
      for (int i = 0; i < links_between_groups_; ++i) {
        const int port1 = ((g2 - g1 - 1 + groups_) % groups_) * links_between_groups_ + i;
        const int port2 = ((g1 - g2 - 1 + groups_) % groups_) * links_between_groups_ + i;
        const int r1 = port1 / global_per_router;
        const int r2 = port2 / global_per_router;
        const int link =
            store.add_link(routers_[g1 * routers_per_group_ + r1], routers_[g2 * routers_per_group_ + r2],
                           LinkKind::kFabric, link_bandwidth, link_latency);
        global_[g1 * groups_ + g2].push_back(GlobalLink{r1, r2, link, true});
        global_[g2 * groups_ + g1].push_back(GlobalLink{r2, r1, link, false});
      }
    }
  }
  const int nodes = static_cast<int>(fabric.nodes);
  attach_of_nic_.assign(static_cast<size_t>(nodes * nics_), -1);
  for (int n = 0; n < nodes; ++n) {
    for (int c = 0; c < nics_; ++c) {
      attach_of_nic_[static_cast<size_t>(n * nics_ + c)] =
          store.add_link(layout.nic(n, c), routers_[router_of_node(n)], LinkKind::kNic,
                         topology.node.nics.link.bandwidth_bytes_per_s,
                         topology.node.nics.link.latency_s + fabric.switch_latency_s / 2);
    }
  }

  // Halves of whole groups: floor(G/2) * ceil(G/2) * m global links cross; with one group, the
  // local links between its two halves of routers do. The NIC links bound it too.
  double cut = 0;
  if (groups_ > 1) {
    cut = static_cast<double>(groups_ / 2) * (groups_ - groups_ / 2) * links_between_groups_ * link_bandwidth;
  } else if (routers_per_group_ > 1) {
    cut = static_cast<double>(routers_per_group_ / 2) * (routers_per_group_ - routers_per_group_ / 2) *
          link_bandwidth;
  }
  const double injection_half = nodes / 2.0 * node_injection_bandwidth_bytes_per_s(topology);
  if (nodes > 1) bisection_bytes_per_s_ = cut > 0 ? std::min(cut, injection_half) : injection_half;
  description_ = fmt::format(
      "dragonfly, {} groups of {} routers, {} node{} per router, {} global link{} between each "
      "pair of groups",
      groups_, routers_per_group_, nodes_per_router_, nodes_per_router_ == 1 ? "" : "s",
      links_between_groups_, links_between_groups_ == 1 ? "" : "s");
}

Hop DragonflyFabric::local_hop(int r1, int r2) const {
  const int link = local_links_[r1][r2 % routers_per_group_];
  return Hop{link, r1 < r2};
}

void DragonflyFabric::append_route(int src_node, int src_nic, int dst_node, int dst_nic,
                                   uint64_t /*flow_key*/, std::vector<Hop>& out) const {
  out.push_back(Hop{attach_of_nic_[static_cast<size_t>(src_node * nics_ + src_nic)], true});
  const int rs = router_of_node(src_node);
  const int rd = router_of_node(dst_node);
  const int gs = group_of_router(rs);
  const int gd = group_of_router(rd);
  if (gs == gd) {
    if (rs != rd) out.push_back(local_hop(rs, rd));
  } else {
    const std::vector<GlobalLink>& links = global_[static_cast<size_t>(gs * groups_ + gd)];
    TRAINSIM_PLATFORM_CHECK(!links.empty(), "groups {} and {} are not connected", gs, gd);
    const GlobalLink& g = links[static_cast<size_t>((src_node + dst_node) % static_cast<int>(links.size()))];
    const int exit_router = gs * routers_per_group_ + g.src_router;
    const int entry_router = gd * routers_per_group_ + g.dst_router;
    if (rs != exit_router) out.push_back(local_hop(rs, exit_router));
    out.push_back(Hop{g.link, g.forward});
    if (entry_router != rd) out.push_back(local_hop(entry_router, rd));
  }
  out.push_back(Hop{attach_of_nic_[static_cast<size_t>(dst_node * nics_ + dst_nic)], false});
}

}  // namespace

std::unique_ptr<FabricRouting> build_dragonfly_fabric(const config::Topology& topology,
                                                      const NodeLayout& layout, GraphStore& store) {
  return std::make_unique<DragonflyFabric>(topology, layout, store);
}

}  // namespace trainsim::platform::internal
