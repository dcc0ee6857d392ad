#include "sim/platform/topology_graph.h"

#include <charconv>
#include <vector>

#include <boost/graph/connected_components.hpp>
#include <fmt/format.h>

#include "sim/platform/fabric.h"
#include "sim/platform/invariant.h"
#include "sim/platform/node_layout.h"

namespace trainsim::platform {
namespace {

// Parses the decimal number at the start of `text`, advancing it; nullopt when there is none.
std::optional<int> take_number(std::string_view& text) {
  int value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end == text.data()) return std::nullopt;
  text.remove_prefix(static_cast<size_t>(end - text.data()));
  return value;
}

bool take_prefix(std::string_view& text, std::string_view prefix) {
  if (text.substr(0, prefix.size()) != prefix) return false;
  text.remove_prefix(prefix.size());
  return true;
}

}  // namespace

TopologyGraph::TopologyGraph(const config::Topology& topology)
    : topology_(topology),
      layout_(std::make_unique<internal::NodeLayout>(
          topology.node, topology.fabric.kind == config::FabricKind::kRailOptimized)),
      gpus_per_node_(static_cast<int>(topology.node.gpus)),
      node_count_(static_cast<int>(topology.fabric.nodes)) {
  for (int n = 0; n < node_count_; ++n) layout_->add_node(store_, n);
  fabric_ = internal::build_fabric(topology_, *layout_, store_);
  // Every GPU reaches every other: the decoder refuses fabric parameters that would leave a node
  // out (sim/config/topology_decode.cc), so a disconnected GPU here is a generator bug.
  std::vector<int> component(store_.vertex_count());
  boost::connected_components(store_.graph(), component.data());
  for (int gpu = 0; gpu < gpu_count(); ++gpu) {
    TRAINSIM_PLATFORM_CHECK(component[gpu_vertex(gpu)] == component[gpu_vertex(0)],
                            "{} is not connected to {} in topology {}", gpu_name(gpu), gpu_name(0),
                            topology_.name);
  }
}

TopologyGraph::~TopologyGraph() = default;

VertexId TopologyGraph::gpu_vertex(int gpu) const {
  if (gpu < 0 || gpu >= gpu_count()) {
    throw UnknownGpuError(
        fmt::format("GPU {} does not exist: {} has GPUs 0 to {}", gpu, topology_.name, gpu_count() - 1));
  }
  return layout_->gpu(gpu / gpus_per_node_, gpu % gpus_per_node_);
}

VertexId TopologyGraph::host_vertex(int node) const {
  TRAINSIM_PLATFORM_CHECK(node >= 0 && node < node_count_, "node {} of {}", node, node_count_);
  return layout_->host(node);
}

int TopologyGraph::gpu_by_name(std::string_view name) const {
  std::string_view rest = name;
  std::optional<int> node;
  std::optional<int> local;
  if (take_prefix(rest, "node") && (node = take_number(rest)) && take_prefix(rest, "/gpu") &&
      (local = take_number(rest)) && rest.empty() && *node >= 0 && *node < node_count_ && *local >= 0 &&
      *local < gpus_per_node_) {
    return *node * gpus_per_node_ + *local;
  }
  throw UnknownGpuError(
      fmt::format("unknown GPU \"{}\": {} names its GPUs node<n>/gpu<i> with n from 0 to {} and i "
                  "from 0 to {}",
                  name, topology_.name, node_count_ - 1, gpus_per_node_ - 1));
}

std::string TopologyGraph::gpu_name(int gpu) const { return store_.vertex(gpu_vertex(gpu)).name; }

std::vector<Hop> TopologyGraph::route(VertexId src, VertexId dst) const {
  std::vector<Hop> hops;
  append_route(src, dst, hops);
  return hops;
}

void TopologyGraph::append_to_nic(int node, int offset, int nic, std::vector<Hop>& out) const {
  const bool gpu = layout_->is_gpu_offset(offset);
  const int local = offset - layout_->gpu_offset();
  if (gpu && layout_->nic_of_gpu(local) != nic) {  // PXN: to the GPU of the NIC's rail first
    layout_->append_nvlink(node, local, nic, out);
    layout_->append_pcie(node, layout_->gpu_offset() + nic, layout_->nic_offset() + nic, out);
    return;
  }
  layout_->append_pcie(node, offset, layout_->nic_offset() + nic, out);
}

void TopologyGraph::append_route(VertexId src, VertexId dst, std::vector<Hop>& out) const {
  if (src == dst) return;
  const int src_node = layout_->node_of(src);
  const int dst_node = layout_->node_of(dst);
  const int src_offset = layout_->offset_of(src);
  const int dst_offset = layout_->offset_of(dst);
  // Fabric switches come after every node's vertices, so their "node" is past the last one.
  const auto is_endpoint = [&](int node, int offset) {
    return node < node_count_ && (layout_->is_gpu_offset(offset) || offset == layout_->host_offset());
  };
  TRAINSIM_PLATFORM_CHECK(is_endpoint(src_node, src_offset) && is_endpoint(dst_node, dst_offset),
                          "route between {} and {}: only GPUs and host endpoints are routed", src, dst);
  const bool src_gpu = layout_->is_gpu_offset(src_offset);
  const bool dst_gpu = layout_->is_gpu_offset(dst_offset);
  if (src_node == dst_node) {
    if (src_gpu && dst_gpu) {
      layout_->append_nvlink(src_node, src_offset - layout_->gpu_offset(), dst_offset - layout_->gpu_offset(),
                             out);
    } else {
      layout_->append_pcie(src_node, src_offset, dst_offset, out);
    }
    return;
  }
  TRAINSIM_PLATFORM_CHECK(fabric_ != nullptr && layout_->nics() > 0, "nodes {} and {} are not connected",
                          src_node, dst_node);
  const auto nic_of = [&](int offset, bool gpu) {
    return gpu ? layout_->nic_of_gpu(offset - layout_->gpu_offset()) : layout_->nic_of_host();
  };
  const int dst_nic = nic_of(dst_offset, dst_gpu);
  const bool rails = topology_.fabric.kind == config::FabricKind::kRailOptimized;
  const int src_nic = rails ? dst_nic : nic_of(src_offset, src_gpu);
  append_to_nic(src_node, src_offset, src_nic, out);
  fabric_->append_route(src_node, src_nic, dst_node, dst_nic, (static_cast<uint64_t>(src) << 32) ^ dst, out);
  layout_->append_pcie(dst_node, layout_->nic_offset() + dst_nic, dst_offset, out);
}

double TopologyGraph::path_latency_s(int src_gpu, int dst_gpu) const {
  thread_local std::vector<Hop> hops;
  hops.clear();
  append_route(gpu_vertex(src_gpu), gpu_vertex(dst_gpu), hops);
  double latency = 0;
  for (const Hop& hop : hops) latency += store_.link(hop.link).latency_s;
  return latency;
}

double TopologyGraph::nvlink_bisection_bandwidth_bytes_per_s() const {
  return layout_->nvlink_bisection_bandwidth_bytes_per_s();
}

double TopologyGraph::fabric_bisection_bandwidth_bytes_per_s() const {
  return fabric_ ? fabric_->bisection_bandwidth_bytes_per_s() : 0.0;
}

std::string TopologyGraph::fabric_description() const {
  return fabric_ ? fabric_->description() : std::string("single node");
}

}  // namespace trainsim::platform
