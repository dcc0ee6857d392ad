// Torus: one router per node at integer coordinates (dimension 0 varies fastest: node = x0 + d0 *
// (x1 + d1 * (x2 + ...))), linked to its neighbours at +-1 in every dimension with wrap-around.
// A dimension of size 2 has a single link between its two routers, a dimension of size 1 none.
// The node's NICs hang off its router. Routing is dimension-ordered (dimension 0 first), each
// dimension the short way round, ties in the + direction.
#include <algorithm>

#include <fmt/format.h>

#include "sim/platform/fabric.h"

namespace trainsim::platform::internal {
namespace {

class TorusFabric : public FabricRouting {
 public:
  TorusFabric(const config::Topology& topology, const NodeLayout& layout, GraphStore& store);

  void append_route(int src_node, int src_nic, int dst_node, int dst_nic, uint64_t /*flow_key*/,
                    std::vector<Hop>& out) const override;
  double bisection_bandwidth_bytes_per_s() const override { return bisection_bytes_per_s_; }
  std::string description() const override { return description_; }

 private:
  int coordinate(int node, size_t d) const { return (node / strides_[d]) % dims_[d]; }

  int nics_ = 0;
  std::vector<int> dims_;
  std::vector<int> strides_;
  std::vector<std::vector<int>> plus_link_;  // [node][dim] -> link to the +1 neighbour
  std::vector<std::vector<bool>> plus_forward_;
  std::vector<int> attach_of_nic_;
  double bisection_bytes_per_s_ = 0;
  std::string description_;
};

TorusFabric::TorusFabric(const config::Topology& topology, const NodeLayout& layout, GraphStore& store) {
  const config::Fabric& fabric = topology.fabric;
  nics_ = layout.nics();
  int stride = 1;
  for (const int64_t d : fabric.dims) {
    dims_.push_back(static_cast<int>(d));
    strides_.push_back(stride);
    stride *= static_cast<int>(d);
  }
  const int nodes = static_cast<int>(fabric.nodes);
  std::vector<VertexId> routers;
  for (int n = 0; n < nodes; ++n) {
    std::string coords;
    for (size_t d = 0; d < dims_.size(); ++d) {
      coords += fmt::format("{}{}", d == 0 ? "" : ".", coordinate(n, d));
    }
    routers.push_back(store.add_vertex(Vertex{VertexKind::kSwitch, "fabric/torus" + coords, -1}));
  }
  const double latency = fabric.link.latency_s + fabric.switch_latency_s;
  plus_link_.assign(static_cast<size_t>(nodes), std::vector<int>(dims_.size(), -1));
  plus_forward_.assign(static_cast<size_t>(nodes), std::vector<bool>(dims_.size(), true));
  for (size_t d = 0; d < dims_.size(); ++d) {
    if (dims_[d] < 2) continue;
    for (int n = 0; n < nodes; ++n) {
      const int c = coordinate(n, d);
      const int next = n + ((c + 1) % dims_[d] - c) * strides_[d];
      if (dims_[d] == 2 && c == 1) {  // the single link of a size-2 ring, seen from its other end
        plus_link_[n][d] = plus_link_[next][d];
        plus_forward_[n][d] = false;
        continue;
      }
      plus_link_[n][d] = store.add_link(routers[n], routers[next], LinkKind::kFabric,
                                        fabric.link.bandwidth_bytes_per_s, latency);
    }
  }
  attach_of_nic_.assign(static_cast<size_t>(nodes * nics_), -1);
  for (int n = 0; n < nodes; ++n) {
    for (int c = 0; c < nics_; ++c) {
      attach_of_nic_[static_cast<size_t>(n * nics_ + c)] = store.add_link(
          layout.nic(n, c), routers[n], LinkKind::kNic, topology.node.nics.link.bandwidth_bytes_per_s,
          topology.node.nics.link.latency_s + fabric.switch_latency_s / 2);
    }
  }

  // Cutting the largest dimension in two crosses 2 links per ring along it (1 for a size-2 ring).
  const int largest = *std::max_element(dims_.begin(), dims_.end());
  if (nodes > 1) {
    const double rings = static_cast<double>(nodes) / largest;
    const double cut = rings * (largest > 2 ? 2 : 1) * fabric.link.bandwidth_bytes_per_s;
    bisection_bytes_per_s_ = std::min(cut, nodes / 2.0 * node_injection_bandwidth_bytes_per_s(topology));
  }
  std::string shape;
  for (size_t d = 0; d < dims_.size(); ++d) shape += fmt::format("{}{}", d == 0 ? "" : "x", dims_[d]);
  description_ = fmt::format("torus {}, dimension-ordered routing", shape);
}

void TorusFabric::append_route(int src_node, int src_nic, int dst_node, int dst_nic, uint64_t /*flow_key*/,
                               std::vector<Hop>& out) const {
  out.push_back(Hop{attach_of_nic_[static_cast<size_t>(src_node * nics_ + src_nic)], true});
  int at = src_node;
  for (size_t d = 0; d < dims_.size(); ++d) {
    const int size = dims_[d];
    const int delta = ((coordinate(dst_node, d) - coordinate(at, d)) % size + size) % size;
    if (delta == 0) continue;
    const bool plus = delta <= size / 2;
    for (int step = 0; step < (plus ? delta : size - delta); ++step) {
      const int c = coordinate(at, d);
      if (plus) {
        out.push_back(Hop{plus_link_[at][d], plus_forward_[at][d]});
        at += ((c + 1) % size - c) * strides_[d];
      } else {
        const int prev = at + ((c + size - 1) % size - c) * strides_[d];
        out.push_back(Hop{plus_link_[prev][d], !plus_forward_[prev][d]});
        at = prev;
      }
    }
  }
  out.push_back(Hop{attach_of_nic_[static_cast<size_t>(dst_node * nics_ + dst_nic)], false});
}

}  // namespace

std::unique_ptr<FabricRouting> build_torus_fabric(const config::Topology& topology, const NodeLayout& layout,
                                                  GraphStore& store) {
  return std::make_unique<TorusFabric>(topology, layout, store);
}

}  // namespace trainsim::platform::internal
