// What `trainsim topo` reports about a topology: sizes, injection and bisection bandwidth,
// diameter, and the hop-by-hop route between two GPUs. Bandwidths in bytes/s per direction,
// latencies in seconds, all computed from the graph and its routing (sim/platform/topology_graph.h).
#ifndef TRAINSIM_SIM_PLATFORM_ANALYSIS_H_
#define TRAINSIM_SIM_PLATFORM_ANALYSIS_H_

#include <string>
#include <vector>

#include "sim/platform/topology_graph.h"

namespace trainsim::platform {

struct TopologySummary {
  int gpus = 0;
  int nodes = 0;
  int gpus_per_node = 0;
  size_t vertices = 0;
  size_t links = 0;    // graph edges (full-duplex links; a trunk counts once)
  size_t cables = 0;   // physical links (a trunk counts its cables)
  std::string fabric;  // TopologyGraph::fabric_description()
  // What one GPU can push into its node's NVLink domain (the sum of its NVLink links), and what it
  // gets out of the node when every GPU of the node sends to another node at once (its share of
  // the most contended link between it and the fabric); 0 without a fabric.
  double intra_node_injection_bytes_per_s = 0;
  double inter_node_injection_bytes_per_s = 0;
  double nvlink_bisection_bytes_per_s = 0;
  double fabric_bisection_bytes_per_s = 0;  // 0 for a single node
  // Most links crossed by the route between two GPUs (from the GPUs of the first and last node
  // to every GPU; every fabric generated here looks the same from any node, so these see the
  // farthest pairs).
  int diameter_hops = 0;
};

// Computes the summary. Costs O(gpus_per_node x gpus x route length).
TopologySummary summarize(const TopologyGraph& graph);

// The two injection bandwidths of TopologySummary, alone (cheap: one node's routes).
double intra_node_injection_bytes_per_s(const TopologyGraph& graph);
double inter_node_injection_bytes_per_s(const TopologyGraph& graph);

struct PathHop {
  std::string from;
  std::string to;
  LinkKind kind = LinkKind::kNvLink;
  double bandwidth_bytes_per_s = 0;
  double latency_s = 0;
  int cables = 1;
  int cable = -1;  // which parallel cable the route takes (ecmp, d-mod-k); -1 for a link without twins
};

struct PathReport {
  std::string from;
  std::string to;
  std::vector<PathHop> hops;
  double latency_s = 0;               // sum over the hops
  double bottleneck_bytes_per_s = 0;  // smallest hop bandwidth; 0 when from == to
};

// The route the simulator uses from GPU `src` to GPU `dst`. Throws UnknownGpuError for bad ids.
PathReport describe_path(const TopologyGraph& graph, int src_gpu, int dst_gpu);

}  // namespace trainsim::platform

#endif  // TRAINSIM_SIM_PLATFORM_ANALYSIS_H_
