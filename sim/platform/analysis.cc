#include "sim/platform/analysis.h"

#include <algorithm>
#include <limits>
#include <map>

namespace trainsim::platform {

double intra_node_injection_bytes_per_s(const TopologyGraph& graph) {
  double total = 0;
  const VertexId gpu = graph.gpu_vertex(0);
  for (const auto& edge : boost::make_iterator_range(boost::out_edges(gpu, graph.graph()))) {
    const Link& link = graph.graph()[edge];
    if (link.kind == LinkKind::kNvLink) total += link.bandwidth_bytes_per_s;
  }
  return total;
}

// Every GPU of node 0 sends to the same GPU of node 1 at once; each gets the smallest share of the
// links it crosses up to and including its NIC's link into the fabric.
double inter_node_injection_bytes_per_s(const TopologyGraph& graph) {
  if (graph.node_count() < 2) return 0;
  const int g = graph.gpus_per_node();
  std::vector<std::vector<Hop>> paths;
  std::map<std::pair<int, bool>, int> users;  // (link, direction) -> GPUs crossing it
  for (int i = 0; i < g; ++i) {
    std::vector<Hop> hops = graph.route(graph.gpu_vertex(i), graph.gpu_vertex(g + i));
    const auto nic = std::find_if(hops.begin(), hops.end(), [&](const Hop& h) {
      return graph.store().link(h.link).kind == LinkKind::kNic;
    });
    hops.erase(nic == hops.end() ? nic : nic + 1, hops.end());
    for (const Hop& h : hops) ++users[{h.link, h.forward}];
    paths.push_back(std::move(hops));
  }
  double share = std::numeric_limits<double>::infinity();
  for (const std::vector<Hop>& hops : paths) {
    for (const Hop& h : hops) {
      share = std::min(share, graph.store().link(h.link).bandwidth_bytes_per_s / users[{h.link, h.forward}]);
    }
  }
  return share;
}

namespace {

int diameter(const TopologyGraph& graph) {
  std::vector<int> sources;
  const int g = graph.gpus_per_node();
  for (int i = 0; i < g; ++i) sources.push_back(i);
  if (graph.node_count() > 1) {
    for (int i = 0; i < g; ++i) sources.push_back((graph.node_count() - 1) * g + i);
  }
  size_t longest = 0;
  std::vector<Hop> hops;
  for (const int src : sources) {
    for (int dst = 0; dst < graph.gpu_count(); ++dst) {
      hops.clear();
      graph.append_route(graph.gpu_vertex(src), graph.gpu_vertex(dst), hops);
      longest = std::max(longest, hops.size());
    }
  }
  return static_cast<int>(longest);
}

}  // namespace

TopologySummary summarize(const TopologyGraph& graph) {
  TopologySummary s;
  s.gpus = graph.gpu_count();
  s.nodes = graph.node_count();
  s.gpus_per_node = graph.gpus_per_node();
  s.vertices = graph.store().vertex_count();
  s.links = graph.store().link_count();
  for (size_t l = 0; l < s.links; ++l) {
    s.cables += static_cast<size_t>(graph.store().link(static_cast<int>(l)).cables);
  }
  s.fabric = graph.fabric_description();
  s.intra_node_injection_bytes_per_s = intra_node_injection_bytes_per_s(graph);
  s.inter_node_injection_bytes_per_s = inter_node_injection_bytes_per_s(graph);
  s.nvlink_bisection_bytes_per_s = graph.nvlink_bisection_bandwidth_bytes_per_s();
  s.fabric_bisection_bytes_per_s = graph.fabric_bisection_bandwidth_bytes_per_s();
  s.diameter_hops = diameter(graph);
  return s;
}

PathReport describe_path(const TopologyGraph& graph, int src_gpu, int dst_gpu) {
  PathReport report;
  const VertexId src = graph.gpu_vertex(src_gpu);
  const VertexId dst = graph.gpu_vertex(dst_gpu);
  report.from = graph.store().vertex(src).name;
  report.to = graph.store().vertex(dst).name;
  double bottleneck = std::numeric_limits<double>::infinity();
  for (const Hop& hop : graph.route(src, dst)) {
    const Link& link = graph.store().link(hop.link);
    report.hops.push_back(PathHop{graph.store().vertex(graph.store().from(hop)).name,
                                  graph.store().vertex(graph.store().to(hop)).name, link.kind,
                                  link.bandwidth_bytes_per_s, link.latency_s, link.cables, link.cable});
    report.latency_s += link.latency_s;
    bottleneck = std::min(bottleneck, link.bandwidth_bytes_per_s);
  }
  report.bottleneck_bytes_per_s = report.hops.empty() ? 0 : bottleneck;
  return report;
}

}  // namespace trainsim::platform
