// The cluster described by a topology file, as a graph with routing: what every other part of
// the simulator asks "which links does traffic from A to B cross?".
//
// GPUs have global ids 0 .. gpu_count()-1, node-major (GPU i of node n is n * gpus_per_node + i)
// and names "node<n>/gpu<i>". Each node also has a host-memory endpoint ("node<n>/host") for
// host-device copies. Routes are deterministic:
//   - GPU to GPU on one node: over the NVLink domain.
//   - GPU to its node's host memory: over the PCIe tree (GPU link, switch uplink, memory link).
//   - Between nodes: PCIe from the source to its NIC, the fabric, PCIe from the NIC to the
//     destination. A GPU uses its closest NIC (rail-optimized: NIC i for GPU i; a GPU sending to a
//     GPU on another rail first crosses NVLink to the local GPU of that rail, as NCCL's PXN does).
#ifndef TRAINSIM_SIM_PLATFORM_TOPOLOGY_GRAPH_H_
#define TRAINSIM_SIM_PLATFORM_TOPOLOGY_GRAPH_H_

#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "sim/config/topology.h"
#include "sim/platform/graph.h"

namespace trainsim::platform {

namespace internal {
class NodeLayout;
class FabricRouting;
}  // namespace internal

// A GPU name or id on the command line or in an API call that names no GPU of the topology.
class UnknownGpuError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

class TopologyGraph {
 public:
  // Builds the graph of `topology`. Throws config::ConfigError (located at the topology file, with
  // the key to change) when its fabric parameters cannot be realised. Immutable afterwards; safe
  // to read from several threads.
  explicit TopologyGraph(const config::Topology& topology);
  ~TopologyGraph();
  TopologyGraph(const TopologyGraph&) = delete;
  TopologyGraph& operator=(const TopologyGraph&) = delete;

  const config::Topology& topology() const { return topology_; }
  const GraphStore& store() const { return store_; }
  const Graph& graph() const { return store_.graph(); }

  int gpu_count() const { return gpus_per_node_ * node_count_; }
  int node_count() const { return node_count_; }
  int gpus_per_node() const { return gpus_per_node_; }
  int node_of_gpu(int gpu) const { return gpu / gpus_per_node_; }

  VertexId gpu_vertex(int gpu) const;
  VertexId host_vertex(int node) const;
  // The GPU id of `name` ("node3/gpu5"); throws UnknownGpuError naming the valid range otherwise.
  int gpu_by_name(std::string_view name) const;
  std::string gpu_name(int gpu) const;

  // The links from endpoint `src` to endpoint `dst` (GPU or host vertices), in order; empty when
  // src == dst.
  std::vector<Hop> route(VertexId src, VertexId dst) const;
  void append_route(VertexId src, VertexId dst, std::vector<Hop>& out) const;
  // Sum of the link latencies on the route between two GPUs, seconds.
  double path_latency_s(int src_gpu, int dst_gpu) const;

  // Bisection bandwidth of one node's NVLink domain and of the fabric between nodes (0 with a
  // single node), bytes/s per direction. See the generators in sim/platform/fabric_*.cc.
  double nvlink_bisection_bandwidth_bytes_per_s() const;
  double fabric_bisection_bandwidth_bytes_per_s() const;
  // How the fabric was generated, with its derived parameters ("single node" for one node).
  std::string fabric_description() const;

 private:
  void append_to_nic(int node, int offset, int nic, std::vector<Hop>& out) const;

  config::Topology topology_;
  GraphStore store_;
  std::unique_ptr<internal::NodeLayout> layout_;
  std::unique_ptr<internal::FabricRouting> fabric_;
  int gpus_per_node_ = 0;
  int node_count_ = 0;
};

}  // namespace trainsim::platform

#endif  // TRAINSIM_SIM_PLATFORM_TOPOLOGY_GRAPH_H_
