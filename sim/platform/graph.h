// The cluster as a Boost.Graph: one vertex per GPU, NVSwitch, PCIe switch, CPU root complex, host
// memory endpoint, NIC and fabric switch; one edge per full-duplex link. Built by TopologyGraph
// (sim/platform/topology_graph.h); everything else reads it.
//
// Units: bandwidths in bytes/s per direction, latencies in seconds. A link's latency already
// includes half the traversal latency of each switch it touches, so the latency of a path is the
// sum of its links' latencies (the switch latency is counted once per switch crossed). The same
// convention splits a star's end-to-end latency: a GPU's link into an NVSwitch carries half of the
// GPU-to-GPU latency given in the topology file, and so does each half of a PCIe path.
#ifndef TRAINSIM_SIM_PLATFORM_GRAPH_H_
#define TRAINSIM_SIM_PLATFORM_GRAPH_H_

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include <boost/graph/adjacency_list.hpp>

namespace trainsim::platform {

enum class VertexKind {
  kGpu,
  kNvSwitch,    // the NVLink switch of a node (or the peer-to-peer fabric of a PCIe-only node)
  kPcieSwitch,  // a PCIe switch between GPUs/NICs and the CPU root complex
  kCpu,         // the CPU root complex
  kHost,        // pinned host memory: the endpoint of host-device copies
  kNic,
  kSwitch,  // a fabric switch (or a torus router)
};

enum class LinkKind {
  kNvLink,      // GPU to NVSwitch, or GPU to GPU in an NVLink mesh
  kPcie,        // GPU or NIC to its PCIe switch (or to the root complex)
  kPcieUplink,  // PCIe switch to the CPU root complex
  kHostMemory,  // root complex to host memory
  kNic,         // NIC to its first fabric switch
  kFabric,      // switch to switch
};

std::string_view to_string(LinkKind kind);

struct Vertex {
  VertexKind kind = VertexKind::kGpu;
  std::string name;  // unique, e.g. "node3/gpu5", "node3/pcie1", "fabric/l2/sw0"
  int node = -1;     // owning node; -1 for fabric switches
};

// A full-duplex link; its two directions are independent resources of the same bandwidth.
struct Link {
  LinkKind kind = LinkKind::kNvLink;
  int index = 0;  // position in TopologyGraph::link(): stable, used to name SimGrid links
  double bandwidth_bytes_per_s = 0;
  double latency_s = 0;
  int cables = 1;  // physical links this edge stands for (a trunk of parallel cables > 1)
  int cable = -1;  // which of the parallel cables between two switches (ecmp, d-mod-k); -1 for none
};

// listS edges: descriptors (kept in GraphStore) stay valid as links are added.
using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::undirectedS, Vertex, Link,
                                    boost::no_property, boost::listS>;
using VertexId = Graph::vertex_descriptor;

// One traversed link: `forward` when it is crossed from its first endpoint (the one given when it
// was added) to its second.
struct Hop {
  int link = 0;
  bool forward = true;
};

// The graph under construction plus an index of its links. Vertices and links are appended only.
class GraphStore {
 public:
  VertexId add_vertex(Vertex vertex);
  // Adds a link between `a` and `b` and returns its index: one trunk of `cables` physical links, or
  // with `cable` >= 0 one of several parallel links between the same two vertices. Indices are
  // consecutive.
  int add_link(VertexId a, VertexId b, LinkKind kind, double bandwidth_bytes_per_s, double latency_s,
               int cables = 1, int cable = -1);

  const Graph& graph() const { return graph_; }
  size_t vertex_count() const { return boost::num_vertices(graph_); }
  size_t link_count() const { return edges_.size(); }
  const Vertex& vertex(VertexId v) const { return graph_[v]; }
  const Link& link(int index) const { return graph_[edges_[static_cast<size_t>(index)]]; }
  // The endpoints of link `index` in the order they were given to add_link.
  VertexId first(int index) const { return ends_[static_cast<size_t>(index)].first; }
  VertexId second(int index) const { return ends_[static_cast<size_t>(index)].second; }
  // Where a hop starts and ends.
  VertexId from(const Hop& hop) const { return hop.forward ? first(hop.link) : second(hop.link); }
  VertexId to(const Hop& hop) const { return hop.forward ? second(hop.link) : first(hop.link); }

 private:
  Graph graph_;
  std::vector<Graph::edge_descriptor> edges_;
  std::vector<std::pair<VertexId, VertexId>> ends_;
};

// Appends `path` to `out` reversed (last hop first, each crossed the other way).
void append_reversed(const std::vector<Hop>& path, std::vector<Hop>& out);

}  // namespace trainsim::platform

#endif  // TRAINSIM_SIM_PLATFORM_GRAPH_H_
