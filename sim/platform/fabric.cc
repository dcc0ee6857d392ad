#include "sim/platform/fabric.h"

namespace trainsim::platform::internal {

std::unique_ptr<FabricRouting> build_fabric(const config::Topology& topology, const NodeLayout& layout,
                                            GraphStore& store) {
  switch (topology.fabric.kind) {
    case config::FabricKind::kSingleNode:
      return nullptr;
    case config::FabricKind::kFatTree:
    case config::FabricKind::kRailOptimized:
      return build_tree_fabric(topology, layout, store);
    case config::FabricKind::kDragonfly:
      return build_dragonfly_fabric(topology, layout, store);
    case config::FabricKind::kTorus:
      return build_torus_fabric(topology, layout, store);
  }
  return nullptr;
}

double node_injection_bandwidth_bytes_per_s(const config::Topology& topology) {
  return static_cast<double>(topology.node.nics.count) * topology.node.nics.link.bandwidth_bytes_per_s;
}

}  // namespace trainsim::platform::internal
