#include "sim/platform/route_zone.h"

#include <simgrid/kernel/routing/NetPoint.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>

#include "sim/platform/invariant.h"

namespace trainsim::platform::internal {

RouteZone::RouteZone(const std::string& name, const TopologyGraph& graph)
    : NetZoneImpl(name), graph_(graph) {}

void RouteZone::bind(const simgrid::s4u::Host* host, VertexId vertex) {
  const size_t id = host->get_netpoint()->id();
  if (vertex_of_netpoint_.size() <= id) vertex_of_netpoint_.resize(id + 1);
  vertex_of_netpoint_[id] = vertex;
}

void RouteZone::add_link(simgrid::s4u::SplitDuplexLink* link) {
  forward_.push_back(link->get_link_up()->get_impl());
  backward_.push_back(link->get_link_down()->get_impl());
}

// The links carry no latency (see simgrid_platform.h), so `latency` is left as it is.
void RouteZone::get_local_route(const simgrid::kernel::routing::NetPoint* src,
                                const simgrid::kernel::routing::NetPoint* dst,
                                simgrid::kernel::routing::Route* into, double* /*latency*/) {
  TRAINSIM_PLATFORM_CHECK(src->id() < vertex_of_netpoint_.size() && dst->id() < vertex_of_netpoint_.size(),
                          "route from {} to {}: not a host of this platform", src->get_name(),
                          dst->get_name());
  hops_.clear();
  graph_.append_route(vertex_of_netpoint_[src->id()], vertex_of_netpoint_[dst->id()], hops_);
  for (const Hop& hop : hops_) {
    into->link_list_.push_back(hop.forward ? forward_[static_cast<size_t>(hop.link)]
                                           : backward_[static_cast<size_t>(hop.link)]);
  }
}

}  // namespace trainsim::platform::internal
