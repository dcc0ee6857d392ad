#include "sim/platform/simgrid_platform.h"

#include <xbt/log.h>

#include <fmt/format.h>

#include "sim/platform/invariant.h"
#include "sim/platform/route_zone.h"

namespace trainsim::platform {

namespace sg4 = simgrid::s4u;

std::unique_ptr<sg4::Engine> create_engine() {
  xbt_log_control_set("root.thres:warning");
  return std::make_unique<sg4::Engine>("trainsim");
}

Platform::Platform(sg4::Engine& engine, const TopologyGraph& graph, const PlatformOptions& options)
    : graph_(graph) {
  TRAINSIM_PLATFORM_CHECK(engine.get_netzone_root() == nullptr,
                          "the SimGrid engine already has a platform; build one Platform per process");
  engine.set_config("network/model:CM02");
  engine.set_config("network/crosstraffic:0");
  engine.set_config("network/TCP-gamma:1e15");

  // Owned by the engine, which deletes its root zone when it is destroyed.
  auto* zone = new internal::RouteZone("trainsim", graph);
  sg4::NetZone* iface = zone->get_iface();
  const GraphStore& store = graph.store();
  for (int g = 0; g < graph.gpu_count(); ++g) {
    const VertexId v = graph.gpu_vertex(g);
    sg4::Host* host = iface->create_host(store.vertex(v).name, options.gpu_speed_flops_per_s);
    zone->bind(host, v);
    gpu_hosts_.push_back(host);
  }
  for (int n = 0; n < graph.node_count(); ++n) {
    const VertexId v = graph.host_vertex(n);
    sg4::Host* host = iface->create_host(store.vertex(v).name, options.host_speed_flops_per_s);
    zone->bind(host, v);
    host_endpoints_.push_back(host);
  }
  for (size_t l = 0; l < store.link_count(); ++l) {
    const Link& link = store.link(static_cast<int>(l));
    sg4::SplitDuplexLink* sd =
        iface->create_split_duplex_link(fmt::format("link{}", l), link.bandwidth_bytes_per_s);
    sd->set_latency(0);
    zone->add_link(sd);
    links_.push_back(sd);
  }
  iface->seal();
}

sg4::Link* Platform::link(int index, bool forward) const {
  const sg4::SplitDuplexLink* sd = links_.at(static_cast<size_t>(index));
  return forward ? sd->get_link_up() : sd->get_link_down();
}

}  // namespace trainsim::platform
