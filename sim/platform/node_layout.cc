#include "sim/platform/node_layout.h"

#include <algorithm>
#include <deque>

#include <fmt/format.h>

#include "sim/platform/invariant.h"

namespace trainsim::platform::internal {
namespace {

int ceil_div(int a, int b) { return (a + b - 1) / b; }

}  // namespace

NodeLayout::NodeLayout(const config::NodeSpec& spec, bool rail_aligned)
    : spec_(spec), rail_aligned_(rail_aligned) {
  gpus_ = static_cast<int>(spec.gpus);
  nics_ = static_cast<int>(spec.nics.count);
  pcie_switches_ = ceil_div(gpus_, static_cast<int>(spec.pcie.gpus_per_switch));
  int offset = 0;
  gpu_offset_ = offset;
  offset += gpus_;
  if (spec.intra.kind != config::IntraNodeKind::kNvLinkMesh) nvswitch_offset_ = offset++;
  pcie_offset_ = offset;
  offset += pcie_switches_;
  cpu_offset_ = offset++;
  host_offset_ = spec.host_memory_bandwidth_bytes_per_s > 0 ? offset++ : cpu_offset_;
  nic_offset_ = offset;
  offset += nics_;
  vertices_per_node_ = offset;
}

void NodeLayout::add_local_link(GraphStore& store, int node, int a, int b, LinkKind kind,
                                double bandwidth_bytes_per_s, double latency_s) {
  store.add_link(vertex(node, a), vertex(node, b), kind, bandwidth_bytes_per_s, latency_s);
  if (node == 0) local_links_.push_back(LocalLink{a, b, kind});
}

void NodeLayout::add_node(GraphStore& store, int node) {
  TRAINSIM_PLATFORM_CHECK(store.vertex_count() == static_cast<size_t>(node) * vertices_per_node_ &&
                              store.link_count() == static_cast<size_t>(node) * links_per_node_,
                          "node {} added out of order", node);
  const std::string prefix = fmt::format("node{}/", node);
  const auto add = [&](VertexKind kind, const std::string& name) {
    store.add_vertex(Vertex{kind, prefix + name, node});
  };
  for (int g = 0; g < gpus_; ++g) add(VertexKind::kGpu, fmt::format("gpu{}", g));
  if (nvswitch_offset_ >= 0) {
    add(VertexKind::kNvSwitch, spec_.intra.kind == config::IntraNodeKind::kNvSwitch ? "nvswitch" : "p2p");
  }
  for (int s = 0; s < pcie_switches_; ++s) add(VertexKind::kPcieSwitch, fmt::format("pcie{}", s));
  add(VertexKind::kCpu, host_offset_ == cpu_offset_ ? "host" : "cpu");
  if (host_offset_ != cpu_offset_) add(VertexKind::kHost, "host");
  for (int k = 0; k < nics_; ++k) add(VertexKind::kNic, fmt::format("nic{}", k));

  // NVLink domain.
  const config::LinkSpec& nvl = spec_.intra.link;
  if (nvswitch_offset_ >= 0) {
    for (int g = 0; g < gpus_; ++g) {
      if (node == 0) nvlink_of_gpu_.push_back(static_cast<int>(local_links_.size()));
      add_local_link(store, node, gpu_offset_ + g, nvswitch_offset_, LinkKind::kNvLink,
                     nvl.bandwidth_bytes_per_s, nvl.latency_s / 2);
    }
  } else {
    if (node == 0) {
      nvlink_mesh_.assign(static_cast<size_t>(gpus_), std::vector<int>(static_cast<size_t>(gpus_), -1));
    }
    for (int a = 0; a < gpus_; ++a) {
      for (int b = a + 1; b < gpus_; ++b) {
        if (node == 0) {
          nvlink_mesh_[a][b] = nvlink_mesh_[b][a] = static_cast<int>(local_links_.size());
        }
        add_local_link(store, node, gpu_offset_ + a, gpu_offset_ + b, LinkKind::kNvLink,
                       nvl.bandwidth_bytes_per_s, nvl.latency_s);
      }
    }
  }

  // PCIe tree: GPU and NIC links into their switch, switch uplinks into the root complex.
  const config::Pcie& pcie = spec_.pcie;
  const double half = pcie.link.latency_s / 2;
  const int gpus_per_switch = static_cast<int>(pcie.gpus_per_switch);
  const int nics_per_switch = static_cast<int>(pcie.nics_per_switch);
  for (int g = 0; g < gpus_; ++g) {
    add_local_link(store, node, gpu_offset_ + g, pcie_offset_ + g / gpus_per_switch, LinkKind::kPcie,
                   pcie.link.bandwidth_bytes_per_s, half);
  }
  for (int k = 0; k < nics_; ++k) {
    const bool behind_switch = nics_per_switch > 0 && k / nics_per_switch < pcie_switches_;
    const int parent = behind_switch ? pcie_offset_ + k / nics_per_switch : cpu_offset_;
    add_local_link(store, node, nic_offset_ + k, parent, LinkKind::kPcie, pcie.link.bandwidth_bytes_per_s,
                   half);
  }
  for (int s = 0; s < pcie_switches_; ++s) {
    add_local_link(store, node, pcie_offset_ + s, cpu_offset_, LinkKind::kPcieUplink,
                   pcie.switch_uplink_bandwidth_bytes_per_s, half);
  }
  if (host_offset_ != cpu_offset_) {
    add_local_link(store, node, cpu_offset_, host_offset_, LinkKind::kHostMemory,
                   spec_.host_memory_bandwidth_bytes_per_s, 0);
  }

  if (node == 0) {
    links_per_node_ = static_cast<int>(local_links_.size());
    compute_pcie_routes();
  }
}

// Breadth-first search from every vertex of node 0 over the PCIe tree and the host memory link
// (NVLink is not a way to reach a NIC or the host). Links are explored in creation order, so ties
// between equally short paths always resolve the same way.
void NodeLayout::compute_pcie_routes() {
  std::vector<std::vector<std::pair<int, int>>> adjacent(static_cast<size_t>(vertices_per_node_));
  for (int l = 0; l < static_cast<int>(local_links_.size()); ++l) {
    const LocalLink& link = local_links_[static_cast<size_t>(l)];
    if (link.kind == LinkKind::kNvLink) continue;
    adjacent[link.a].emplace_back(l, link.b);
    adjacent[link.b].emplace_back(l, link.a);
  }
  pcie_routes_.assign(static_cast<size_t>(vertices_per_node_), {});
  for (int source = 0; source < vertices_per_node_; ++source) {
    std::vector<Step>& steps = pcie_routes_[static_cast<size_t>(source)];
    steps.assign(static_cast<size_t>(vertices_per_node_), Step{-1, true, -1});
    steps[source].distance = 0;
    std::deque<int> queue{source};
    while (!queue.empty()) {
      const int v = queue.front();
      queue.pop_front();
      for (const auto& [l, w] : adjacent[v]) {
        if (steps[w].distance >= 0) continue;
        steps[w] = Step{l, local_links_[static_cast<size_t>(l)].a == v, steps[v].distance + 1};
        queue.push_back(w);
      }
    }
  }

  nic_of_gpu_.clear();
  for (int g = 0; g < gpus_; ++g) {
    if (nics_ == 0) {
      nic_of_gpu_.push_back(-1);
    } else if (rail_aligned_) {
      nic_of_gpu_.push_back(g);
    } else {
      nic_of_gpu_.push_back(closest_nic(gpu_offset_ + g, g * nics_ / gpus_));
    }
  }
  nic_of_host_ = nics_ == 0 ? -1 : closest_nic(host_offset_, 0);
}

// The NIC closest to `from_offset` over PCIe; `preferred` when it is among the closest, else the
// lowest-numbered of them.
int NodeLayout::closest_nic(int from_offset, int preferred) const {
  const std::vector<Step>& steps = pcie_routes_[static_cast<size_t>(from_offset)];
  int best = -1;
  for (int k = 0; k < nics_; ++k) {
    const int d = steps[static_cast<size_t>(nic_offset_ + k)].distance;
    if (best < 0 || d < steps[static_cast<size_t>(nic_offset_ + best)].distance) best = k;
  }
  const int best_distance = steps[static_cast<size_t>(nic_offset_ + best)].distance;
  return steps[static_cast<size_t>(nic_offset_ + preferred)].distance == best_distance ? preferred : best;
}

void NodeLayout::append_nvlink(int node, int a, int b, std::vector<Hop>& out) const {
  const int base = node * links_per_node_;
  if (nvswitch_offset_ >= 0) {
    out.push_back(Hop{base + nvlink_of_gpu_[static_cast<size_t>(a)], true});
    out.push_back(Hop{base + nvlink_of_gpu_[static_cast<size_t>(b)], false});
  } else {
    out.push_back(Hop{base + nvlink_mesh_[a][b], a < b});
  }
}

void NodeLayout::append_pcie(int node, int from, int to, std::vector<Hop>& out) const {
  const std::vector<Step>& steps = pcie_routes_[static_cast<size_t>(from)];
  TRAINSIM_PLATFORM_CHECK(steps[static_cast<size_t>(to)].distance >= 0, "offset {} unreachable from {}", to,
                          from);
  const size_t start = out.size();
  const int base = node * links_per_node_;
  for (int v = to; v != from;) {
    const Step& s = steps[static_cast<size_t>(v)];
    out.push_back(Hop{base + s.link, s.forward});
    const LocalLink& link = local_links_[static_cast<size_t>(s.link)];
    v = s.forward ? link.a : link.b;
  }
  std::reverse(out.begin() + static_cast<std::ptrdiff_t>(start), out.end());
}

double NodeLayout::nvlink_bisection_bandwidth_bytes_per_s() const {
  const double half_low = gpus_ / 2;
  const double half_high = gpus_ - gpus_ / 2;
  if (nvswitch_offset_ >= 0) return half_low * spec_.intra.link.bandwidth_bytes_per_s;
  return half_low * half_high * spec_.intra.link.bandwidth_bytes_per_s;
}

}  // namespace trainsim::platform::internal
