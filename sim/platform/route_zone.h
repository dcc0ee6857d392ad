// Internal to sim/platform: a SimGrid zone whose routes come from a TopologyGraph. It holds every
// host and link of the platform; SimGrid asks it for the links between two of its hosts each time
// a communication starts.
#ifndef TRAINSIM_SIM_PLATFORM_ROUTE_ZONE_H_
#define TRAINSIM_SIM_PLATFORM_ROUTE_ZONE_H_

#include <string>
#include <vector>

#include <simgrid/kernel/routing/NetZoneImpl.hpp>

#include "sim/platform/topology_graph.h"

namespace trainsim::platform::internal {

class RouteZone : public simgrid::kernel::routing::NetZoneImpl {
 public:
  // The first zone created in an engine becomes its root. `graph` must outlive the engine.
  RouteZone(const std::string& name, const TopologyGraph& graph);

  // Records that SimGrid host `host` stands for graph vertex `vertex` (call once per host).
  void bind(const simgrid::s4u::Host* host, VertexId vertex);
  // Records the SimGrid links of graph link `index` (in index order, once each).
  void add_link(simgrid::s4u::SplitDuplexLink* link);

 protected:
  void get_local_route(const simgrid::kernel::routing::NetPoint* src,
                       const simgrid::kernel::routing::NetPoint* dst, simgrid::kernel::routing::Route* into,
                       double* latency) override;

 private:
  const TopologyGraph& graph_;
  std::vector<VertexId> vertex_of_netpoint_;
  std::vector<simgrid::kernel::resource::StandardLinkImpl*> forward_;
  std::vector<simgrid::kernel::resource::StandardLinkImpl*> backward_;
  std::vector<Hop> hops_;  // scratch
};

}  // namespace trainsim::platform::internal

#endif  // TRAINSIM_SIM_PLATFORM_ROUTE_ZONE_H_
