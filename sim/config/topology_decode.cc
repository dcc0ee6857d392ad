// Decoding of topology files.
#include <fmt/format.h>

#include "sim/config/decode.h"
#include "sim/config/limits.h"

namespace trainsim::config::internal {
namespace {

// Devices of one kind per node, and the counts that multiply into the node count: at most
// kMaxGpus, so that products of two of them cannot overflow. (GPUs per node and node counts are
// checked together, against kMaxGpus, with a message saying why.)
constexpr IntRange kDeviceCount{1, kMaxGpus};

// a * b, or nullopt when the product exceeds kMaxGpus (or would overflow).
std::optional<int64_t> bounded_product(int64_t a, int64_t b) {
  int64_t product = 0;
  if (__builtin_mul_overflow(a, b, &product) || product > kMaxGpus) return std::nullopt;
  return product;
}

std::string too_many_gpus(const std::string& what) {
  return fmt::format(
      "{} is above the limit of {} GPUs per topology (the platform holds every GPU, NIC, switch and link; "
      "larger clusters would exhaust the host's memory); describe a smaller cluster",
      what, kMaxGpus);
}

// A bandwidth that traffic crosses: zero is refused with the reason (the decoders elsewhere only
// say "must be greater than 0").
bool read_link_bandwidth(MapReader& m, std::string_view key, double& out, bool required) {
  const Node value = m.child(key);
  if (!value.defined()) {
    if (required) m.missing(key);
    return false;
  }
  double bandwidth = 0;
  if (!decode(value, bandwidth, QuantityKind::kBandwidth)) return false;
  if (bandwidth == 0) {
    value.error(
        "a bandwidth of 0 never delivers a byte: every transfer over this link would wait forever; give "
        "its real bandwidth per direction, e.g. 400Gbps");
    return false;
  }
  if (bandwidth > kMaxLinkBandwidthBytesPerS) {
    value.error(
        fmt::format("{} is more than the {} per direction any link is allowed (the fastest links "
                    "today are about 1,000 times slower); give its real bandwidth, e.g. 400Gbps",
                    format_quantity(bandwidth, QuantityKind::kBandwidth),
                    format_quantity(kMaxLinkBandwidthBytesPerS, QuantityKind::kBandwidth)));
    return false;
  }
  out = bandwidth;
  return true;
}

// A link given as {bandwidth, latency}; both required.
void decode_link(MapReader& m, LinkSpec& out) {
  read_link_bandwidth(m, "bandwidth", out.bandwidth_bytes_per_s, true);
  m.require("latency", out.latency_s, QuantityKind::kDuration);
}

void decode_node(MapReader& m, NodeSpec& out) {
  m.require("gpus", out.gpus, kPositive);  // bounded with the node count, below
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
    r.read("gpus_per_switch", out.pcie.gpus_per_switch, kDeviceCount);
    r.read("nics_per_switch", out.pcie.nics_per_switch, IntRange{0, kMaxGpus});
    out.pcie.switch_uplink_bandwidth_bytes_per_s = out.pcie.link.bandwidth_bytes_per_s;
    read_link_bandwidth(r, "switch_uplink_bandwidth", out.pcie.switch_uplink_bandwidth_bytes_per_s, false);
    r.finish();
  }
  {
    const Node nics = m.child("nics");
    MapReader r(nics);  // optional: a single-node topology has none
    if (nics.defined()) {
      r.require("count", out.nics.count, kDeviceCount);
      decode_link(r, out.nics.link);
    }
    r.finish();
  }
  m.require("host_memory", out.host_memory_bytes, QuantityKind::kBytes, kPositiveReal);
  m.read("host_memory_bandwidth", out.host_memory_bandwidth_bytes_per_s, QuantityKind::kBandwidth,
         kPositiveReal);
  m.read("other_power", out.other_power_w, QuantityKind::kPower, kPositiveReal);
  m.finish();
}

// fabric.routing and fabric.ecmp_seed of a fat-tree or rail-optimized fabric.
void decode_tree_routing(MapReader& m, Fabric& out) {
  m.read("routing", out.routing);
  const Node seed = m.child("ecmp_seed");
  if (!seed.defined()) return;
  if (out.routing != FabricRouting::kEcmp) {
    seed.error(fmt::format(
        "ecmp_seed seeds the ECMP hash and has no effect with routing: {}; set routing: ecmp or remove it",
        to_string(out.routing)));
    return;
  }
  decode(seed, out.ecmp_seed, kNonNegative);
}

// A routing that picks cables makes every cable above the leaves a link of its own. Their number is
// at most, per level above the leaves, the NIC bandwidth of all nodes over (oversubscription x link
// bandwidth), plus one partial cable per trunk (at most one trunk per NIC).
void check_fabric_cables(MapReader& m, const Fabric& fabric, const NodeSpec& node) {
  if (fabric.routing == FabricRouting::kAdaptive || fabric.link.bandwidth_bytes_per_s <= 0 ||
      node.nics.link.bandwidth_bytes_per_s <= 0 || fabric.levels < 2) {
    return;
  }
  const double nics = static_cast<double>(fabric.nodes) * static_cast<double>(node.nics.count);
  const double per_level = nics * node.nics.link.bandwidth_bytes_per_s /
                               (fabric.oversubscription * fabric.link.bandwidth_bytes_per_s) +
                           nics;
  const double cables = (fabric.levels - 1) * per_level;
  if (cables > static_cast<double>(kMaxFabricCables)) {
    m.child("routing").error(fmt::format(
        "routing {} makes every cable between switch levels a link of its own; {} nodes x {} NICs of {} "
        "over fabric links of {} need up to {:.0f} cables, above the limit of {}; give fabric.link the "
        "bandwidth of one real cable, or use routing: adaptive",
        to_string(fabric.routing), fabric.nodes, node.nics.count,
        format_quantity(node.nics.link.bandwidth_bytes_per_s, QuantityKind::kBandwidth),
        format_quantity(fabric.link.bandwidth_bytes_per_s, QuantityKind::kBandwidth), cables,
        kMaxFabricCables));
  }
}

void decode_fabric(MapReader& m, Fabric& out, const NodeSpec& node) {
  if (!m.require("kind", out.kind)) {
    m.finish();
    return;
  }
  if (out.kind != FabricKind::kFatTree && out.kind != FabricKind::kRailOptimized) {
    for (const char* key : {"routing", "ecmp_seed"}) {
      if (const Node value = m.child(key); value.defined()) {
        value.error(
            fmt::format("{} applies to fat-tree and rail-optimized fabrics; a {} fabric routes "
                        "minimally over its own links; remove it",
                        key, to_string(out.kind)));
      }
    }
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
      decode_tree_routing(m, out);
      break;
    case FabricKind::kDragonfly: {
      bool ok = m.require("groups", out.groups, kDeviceCount);
      ok &= m.require("routers_per_group", out.routers_per_group, kDeviceCount);
      ok &= m.require("nodes_per_router", out.nodes_per_router, kDeviceCount);
      ok &= m.require("global_links_per_router", out.global_links_per_router, kDeviceCount);
      link();
      m.read("switch_latency", out.switch_latency_s, QuantityKind::kDuration);
      if (!ok) break;
      if (const auto routers = bounded_product(out.groups, out.routers_per_group)) {
        if (const auto nodes = bounded_product(*routers, out.nodes_per_router)) {
          out.nodes = *nodes;
        } else {
          m.node().error(
              too_many_gpus(fmt::format("groups x routers_per_group x nodes_per_router = {} x {} x {} nodes",
                                        out.groups, out.routers_per_group, out.nodes_per_router)));
        }
      } else {
        m.node().error(too_many_gpus(
            fmt::format("groups x routers_per_group = {} x {} routers", out.groups, out.routers_per_group)));
      }
      // Minimal routing crosses one global link between groups: every pair of groups needs one.
      if (out.groups > 1 && out.routers_per_group * out.global_links_per_router < out.groups - 1) {
        m.child("global_links_per_router")
            .error(fmt::format(
                "the {} groups cannot all be joined: each group has routers_per_group x "
                "global_links_per_router = {} x {} = {} global links but needs one to each of the other {} "
                "groups, so some nodes would be disconnected; raise global_links_per_router to {} or use "
                "fewer groups",
                out.groups, out.routers_per_group, out.global_links_per_router,
                out.routers_per_group * out.global_links_per_router, out.groups - 1,
                (out.groups - 1 + out.routers_per_group - 1) / out.routers_per_group));
      }
      break;
    }
    case FabricKind::kTorus: {
      link();
      const Node dims = m.child("dims");
      if (!dims.defined()) {
        m.missing("dims");
      } else if (!dims.is_sequence() || dims.elements().empty()) {
        dims.error("expected a list of dimension sizes, e.g. [4, 4, 8]");
      } else {
        out.dims.clear();
        std::optional<int64_t> nodes = 1;
        for (const Node& d : dims.elements()) {
          int64_t size = 0;
          if (decode(d, size, kPositive)) {
            out.dims.push_back(size);
            if (nodes) nodes = bounded_product(*nodes, size);
          }
        }
        if (nodes) {
          out.nodes = *nodes;
        } else {
          dims.error(too_many_gpus("the product of the torus dimensions"));
        }
      }
      break;
    }
  }
  if (out.kind != FabricKind::kSingleNode && node.nics.count == 0 && node.gpus > 0) {
    m.node().error(fmt::format("a {} fabric needs NICs: add node.nics {{count, bandwidth, latency}}",
                               to_string(out.kind)));
  }
  check_fabric_cables(m, out, node);
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
  if (out.node.gpus > 0 && !bounded_product(out.node.gpus, out.fabric.nodes)) {
    int64_t total = 0;
    const bool exact = !__builtin_mul_overflow(out.fabric.nodes, out.node.gpus, &total);
    fabric.error(too_many_gpus(fmt::format("{} nodes x {} GPUs{}", out.fabric.nodes, out.node.gpus,
                                           exact ? fmt::format(" = {} GPUs", total) : std::string())));
  }
  r.finish();
}

}  // namespace trainsim::config::internal
