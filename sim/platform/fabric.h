// Internal to sim/platform: the network between nodes. One generator per config::FabricKind adds
// the fabric's switches and links to the graph and returns the routing between NICs of different
// nodes, plus the fabric's analytic properties.
#ifndef TRAINSIM_SIM_PLATFORM_FABRIC_H_
#define TRAINSIM_SIM_PLATFORM_FABRIC_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sim/config/topology.h"
#include "sim/platform/graph.h"
#include "sim/platform/node_layout.h"

namespace trainsim::platform::internal {

class FabricRouting {
 public:
  virtual ~FabricRouting() = default;
  // Appends the hops from NIC `src_nic` of `src_node` to NIC `dst_nic` of `dst_node` (different
  // nodes), starting with the source NIC's link into the fabric and ending with the destination
  // NIC's. `flow_key` identifies the flow's two endpoints; ECMP hashes it to pick among parallel
  // cables. Deterministic; never called across rails of a rail-optimized fabric.
  virtual void append_route(int src_node, int src_nic, int dst_node, int dst_nic, uint64_t flow_key,
                            std::vector<Hop>& out) const = 0;
  // Bisection bandwidth between the two halves of the nodes, bytes/s per direction: the capacity
  // of the smallest cut that splits the nodes in two equal halves (0 for a single node).
  virtual double bisection_bandwidth_bytes_per_s() const = 0;
  // One line for humans, with the derived parameters (switches, radix), e.g.
  // "fat-tree, 2 levels, 6 nodes per leaf, 7 switches, oversubscription 1:1".
  virtual std::string description() const = 0;
};

// Adds the switches and links of `topology.fabric` to `store`, connecting every NIC of the nodes
// already in `store` (laid out by `layout`), and returns the routing. Returns nullptr for a
// single-node fabric. Throws config::ConfigError (located at the topology file) when the fabric's
// parameters cannot be realised.
std::unique_ptr<FabricRouting> build_fabric(const config::Topology& topology, const NodeLayout& layout,
                                            GraphStore& store);

// Generators, one per fabric family (fabric_tree.cc, fabric_dragonfly.cc, fabric_torus.cc).
std::unique_ptr<FabricRouting> build_tree_fabric(const config::Topology& topology, const NodeLayout& layout,
                                                 GraphStore& store);
std::unique_ptr<FabricRouting> build_dragonfly_fabric(const config::Topology& topology,
                                                      const NodeLayout& layout, GraphStore& store);
std::unique_ptr<FabricRouting> build_torus_fabric(const config::Topology& topology, const NodeLayout& layout,
                                                  GraphStore& store);

// Per-node injection bandwidth into the fabric (all NICs), bytes/s per direction.
double node_injection_bandwidth_bytes_per_s(const config::Topology& topology);

}  // namespace trainsim::platform::internal

#endif  // TRAINSIM_SIM_PLATFORM_FABRIC_H_
