#include "sim/platform/graph.h"

#include <utility>

namespace trainsim::platform {

std::string_view to_string(LinkKind kind) {
  switch (kind) {
    case LinkKind::kNvLink:
      return "nvlink";
    case LinkKind::kPcie:
      return "pcie";
    case LinkKind::kPcieUplink:
      return "pcie-uplink";
    case LinkKind::kHostMemory:
      return "host-memory";
    case LinkKind::kNic:
      return "nic";
    case LinkKind::kFabric:
      return "fabric";
  }
  return "?";
}

VertexId GraphStore::add_vertex(Vertex vertex) { return boost::add_vertex(std::move(vertex), graph_); }

int GraphStore::add_link(VertexId a, VertexId b, LinkKind kind, double bandwidth_bytes_per_s,
                         double latency_s, int cables, int cable) {
  const int index = static_cast<int>(edges_.size());
  Link link{kind, index, bandwidth_bytes_per_s, latency_s, cables, cable};
  edges_.push_back(boost::add_edge(a, b, link, graph_).first);
  ends_.emplace_back(a, b);
  return index;
}

void append_reversed(const std::vector<Hop>& path, std::vector<Hop>& out) {
  for (auto it = path.rbegin(); it != path.rend(); ++it) out.push_back(Hop{it->link, !it->forward});
}

}  // namespace trainsim::platform
