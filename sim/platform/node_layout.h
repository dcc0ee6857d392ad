// Internal to sim/platform: the inside of a node (GPUs, NVLink domain, PCIe tree, host memory,
// NICs) as vertices and links of the topology graph, and the routes that stay inside a node.
//
// Every node has the same layout, so node n's vertices and links are those of node 0 shifted by
// n times the per-node counts; nodes are added first and in order. Intra-node routes are computed
// once on node 0 (shortest paths over the PCIe tree, deterministic ties) and shifted.
//
// Layout: GPU g hangs off PCIe switch g / gpus_per_switch and NIC k off switch k /
// nics_per_switch (off the CPU root complex when nics_per_switch is 0 or the switches run out);
// each switch has an uplink to the root complex, which reaches host memory over a link of the
// host memory bandwidth (no such link when the file gives none). NVLink: one link per GPU into
// the NVSwitch, or one per GPU pair for a mesh. A PCIe-only node (intra.kind pcie) gets a
// peer-to-peer switch instead of the NVSwitch, with `intra.link` per GPU: its peer traffic is
// modelled apart from the PCIe tree and does not contend with host copies.
#ifndef TRAINSIM_SIM_PLATFORM_NODE_LAYOUT_H_
#define TRAINSIM_SIM_PLATFORM_NODE_LAYOUT_H_

#include <vector>

#include "sim/config/topology.h"
#include "sim/platform/graph.h"

namespace trainsim::platform::internal {

class NodeLayout {
 public:
  // `rail_aligned`: GPU i uses NIC i for inter-node traffic (rail-optimized fabrics); otherwise a
  // GPU uses the closest NIC over PCIe, spreading GPUs over equally close NICs.
  NodeLayout(const config::NodeSpec& spec, bool rail_aligned);

  // Appends node `node`'s vertices and links to `store`. Nodes must be added as 0, 1, 2, ... before
  // any other vertex or link.
  void add_node(GraphStore& store, int node);

  int nics() const { return nics_; }
  VertexId gpu(int node, int local) const { return vertex(node, gpu_offset_ + local); }
  VertexId nic(int node, int k) const { return vertex(node, nic_offset_ + k); }
  VertexId host(int node) const { return vertex(node, host_offset_); }
  // The node a node-internal vertex belongs to, and its offset inside the node.
  int node_of(VertexId v) const { return static_cast<int>(v) / vertices_per_node_; }
  int offset_of(VertexId v) const { return static_cast<int>(v) % vertices_per_node_; }
  bool is_gpu_offset(int offset) const { return offset >= gpu_offset_ && offset < gpu_offset_ + gpus_; }
  int gpu_offset() const { return gpu_offset_; }
  int host_offset() const { return host_offset_; }
  int nic_offset() const { return nic_offset_; }

  // The NIC that carries inter-node traffic of GPU `local` (or of the host endpoint).
  int nic_of_gpu(int local) const { return nic_of_gpu_[static_cast<size_t>(local)]; }
  int nic_of_host() const { return nic_of_host_; }

  // GPU a to GPU b of node `node` over the NVLink domain (a != b).
  void append_nvlink(int node, int a, int b, std::vector<Hop>& out) const;
  // From offset `from` to offset `to` of node `node` over the PCIe tree (and host memory link).
  void append_pcie(int node, int from, int to, std::vector<Hop>& out) const;

  // Bisection bandwidth of one node's NVLink domain, bytes/s per direction.
  double nvlink_bisection_bandwidth_bytes_per_s() const;

 private:
  struct LocalLink {
    int a = 0;
    int b = 0;
    LinkKind kind = LinkKind::kNvLink;
  };
  struct Step {
    int link = -1;  // local link index reaching the vertex, -1 at the source
    bool forward = true;
    int distance = 0;
  };

  VertexId vertex(int node, int offset) const {
    return static_cast<VertexId>(node * vertices_per_node_ + offset);
  }
  void add_local_link(GraphStore& store, int node, int a, int b, LinkKind kind, double bandwidth_bytes_per_s,
                      double latency_s);
  void compute_pcie_routes();
  int closest_nic(int from_offset, int preferred) const;

  config::NodeSpec spec_;
  bool rail_aligned_;
  int gpus_ = 0;
  int nics_ = 0;
  int pcie_switches_ = 0;
  int gpu_offset_ = 0;
  int nvswitch_offset_ = -1;  // -1 for an NVLink mesh
  int pcie_offset_ = 0;
  int cpu_offset_ = 0;
  int host_offset_ = 0;  // == cpu_offset_ when the host memory bandwidth is not modelled
  int nic_offset_ = 0;
  int vertices_per_node_ = 0;
  int links_per_node_ = 0;
  std::vector<LocalLink> local_links_;          // recorded while node 0 is added
  std::vector<int> nvlink_of_gpu_;              // local link GPU -> NVSwitch
  std::vector<std::vector<int>> nvlink_mesh_;   // local link between GPU pairs (mesh)
  std::vector<std::vector<Step>> pcie_routes_;  // [source offset][vertex offset]
  std::vector<int> nic_of_gpu_;
  int nic_of_host_ = 0;
};

}  // namespace trainsim::platform::internal

#endif  // TRAINSIM_SIM_PLATFORM_NODE_LAYOUT_H_
