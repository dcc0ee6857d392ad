// Decoding of topology files.
#include <fmt/format.h>

#include "sim/config/decode.h"

namespace trainsim::config::internal {
namespace {

// A link given as {bandwidth, latency}; both required.
void decode_link(MapReader& m, LinkSpec& out) {
  m.require("bandwidth", out.bandwidth_bytes_per_s, QuantityKind::kBandwidth, kPositiveReal);
  m.require("latency", out.latency_s, QuantityKind::kDuration);
}

void decode_node(MapReader& m, NodeSpec& out) {
  m.require("gpus", out.gpus, kPositive);
  {
    const Node intra = m.child("intra");
    if (!intra.defined()) m.missing("intra");
    MapReader r(intra);
    r.require("kind", out.intra.kind);
    decode_link(r, out.intra.link);
    r.read("nvls", out.intra.nvls);
    r.finish();
  }
  {
    const Node pcie = m.child("pcie");
    if (!pcie.defined()) m.missing("pcie");
    MapReader r(pcie);
    decode_link(r, out.pcie.link);
    r.read("gpus_per_switch", out.pcie.gpus_per_switch, kPositive);
    r.read("nics_per_switch", out.pcie.nics_per_switch, kNonNegative);
    out.pcie.switch_uplink_bandwidth_bytes_per_s = out.pcie.link.bandwidth_bytes_per_s;
    r.read("switch_uplink_bandwidth", out.pcie.switch_uplink_bandwidth_bytes_per_s, QuantityKind::kBandwidth,
           kPositiveReal);
    r.finish();
  }
  {
    const Node nics = m.child("nics");
    MapReader r(nics);  // optional: a single-node topology has none
    if (nics.defined()) {
      r.require("count", out.nics.count, kPositive);
      decode_link(r, out.nics.link);
    }
    r.finish();
  }
  m.require("host_memory", out.host_memory_bytes, QuantityKind::kBytes, kPositiveReal);
  m.read("host_memory_bandwidth", out.host_memory_bandwidth_bytes_per_s, QuantityKind::kBandwidth,
         kPositiveReal);
  m.finish();
}

void decode_fabric(MapReader& m, Fabric& out, const NodeSpec& node) {
  if (!m.require("kind", out.kind)) {
    m.finish();
    return;
  }
  const auto link = [&] {
    const Node l = m.child("link");
    if (!l.defined()) m.missing("link");
    MapReader r(l);
    decode_link(r, out.link);
    r.finish();
  };
  switch (out.kind) {
    case FabricKind::kSingleNode:
      m.read("nodes", out.nodes, IntRange{1, 1});
      break;
    case FabricKind::kFatTree:
    case FabricKind::kRailOptimized:
      m.require("nodes", out.nodes, kPositive);
      link();
      m.read("switch_latency", out.switch_latency_s, QuantityKind::kDuration);
      m.read("levels", out.levels, IntRange{1, 3});
      m.read("oversubscription", out.oversubscription, RealRange{1.0});
      break;
    case FabricKind::kDragonfly:
      m.require("groups", out.groups, kPositive);
      m.require("routers_per_group", out.routers_per_group, kPositive);
      m.require("nodes_per_router", out.nodes_per_router, kPositive);
      m.require("global_links_per_router", out.global_links_per_router, kPositive);
      link();
      m.read("switch_latency", out.switch_latency_s, QuantityKind::kDuration);
      out.nodes = out.groups * out.routers_per_group * out.nodes_per_router;
      break;
    case FabricKind::kTorus: {
      link();
      const Node dims = m.child("dims");
      if (!dims.defined()) {
        m.missing("dims");
      } else if (!dims.is_sequence() || dims.elements().empty()) {
        dims.error("expected a list of dimension sizes, e.g. [4, 4, 8]");
      } else {
        out.dims.clear();
        out.nodes = 1;
        for (const Node& d : dims.elements()) {
          int64_t size = 0;
          if (decode(d, size, kPositive)) {
            out.dims.push_back(size);
            out.nodes *= size;
          }
        }
      }
      break;
    }
  }
  if (out.kind != FabricKind::kSingleNode && node.nics.count == 0 && node.gpus > 0) {
    m.node().error(fmt::format("a {} fabric needs NICs: add node.nics {{count, bandwidth, latency}}",
                               to_string(out.kind)));
  }
  if (out.kind == FabricKind::kRailOptimized && node.nics.count != node.gpus && node.nics.count > 0) {
    m.node().error(
        fmt::format("a rail-optimized fabric puts NIC i of every node on rail i and needs one NIC "
                    "per GPU; node has {} GPUs and {} NICs",
                    node.gpus, node.nics.count));
  }
  m.finish();
}

}  // namespace

void decode_topology(const Node& root, Topology& out) {
  MapReader r(root);
  r.child("schema_version");
  r.child("extends");
  r.require("name", out.name);
  r.read("description", out.description);
  const Node sources = r.child("sources");  // free-form citations: key prefix -> source
  if (sources.defined() && !sources.is_map()) sources.error("expected a map of key -> citation");
  const Node node = r.child("node");
  if (!node.defined()) r.missing("node");
  MapReader n(node);
  decode_node(n, out.node);
  const Node fabric = r.child("fabric");
  if (!fabric.defined()) r.missing("fabric");
  MapReader f(fabric);
  decode_fabric(f, out.fabric, out.node);
  r.finish();
}

}  // namespace trainsim::config::internal
