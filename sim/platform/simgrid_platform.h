// The SimGrid platform of a topology graph, built in code (no XML).
//
// Model (decision 1 of docs/DESIGN.md): network/model:CM02, network/crosstraffic:0 and
// network/TCP-gamma:1e15, set before the first zone, so a lone transfer over a route costs exactly
// size / bottleneck bandwidth and concurrent transfers share links by max-min fairness.
//
// Latency is not on the links. CM02 weights a flow's share of a bottleneck by 1/(route latency),
// so flows over routes of different lengths (an NVLink hop against a fabric path) would not split
// a shared link fairly, and the latency of a collective is a property of its algorithm (steps x
// per-step latency) rather than of one transfer. Every SimGrid link therefore has zero latency and
// latency is added where the traffic is issued: per phase of a collective (sim/cost) or per copy.
//
// Zones: one zone holds every host and link, and its routes come from TopologyGraph::route (a
// subclass of SimGrid's NetZoneImpl). SimGrid's own zones route through one gateway per zone,
// which cannot express a rail-optimized fabric, and flat Full/Floyd zones need n^2 route tables;
// computing each route on demand from the graph costs O(hops) time and no memory.
//
// Hosts: "node<n>/gpu<i>" for each GPU and "node<n>/host" for each node's pinned host memory.
// Speeds are in flop/s; the default of 1 flop/s per GPU lets an Exec of d "flops" last d seconds,
// so the engine can execute durations computed by the cost model. Links are named "link<i>" with
// i = Link::index, and are split-duplex (one resource per direction).
#ifndef TRAINSIM_SIM_PLATFORM_SIMGRID_PLATFORM_H_
#define TRAINSIM_SIM_PLATFORM_SIMGRID_PLATFORM_H_

#include <memory>
#include <vector>

#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>

#include "sim/platform/topology_graph.h"

namespace trainsim::platform {

struct PlatformOptions {
  double gpu_speed_flops_per_s = 1.0;
  double host_speed_flops_per_s = 1.0;
};

// Creates the process's SimGrid engine with SimGrid's own log output limited to warnings. SimGrid
// allows one engine per process: call this once.
std::unique_ptr<simgrid::s4u::Engine> create_engine();

class Platform {
 public:
  // Sets the network model on `engine` and builds the platform of `graph` as its root zone. The
  // engine must have no zone yet (aborts otherwise). `graph` must outlive the engine: the zone
  // routes through it. Measured (tests/platform/platform_benchmark.cc, 2 busy cores): 0.06 s for
  // 4,096 GPUs and 0.24 s for 16,384, linear in the number of hosts and links.
  Platform(simgrid::s4u::Engine& engine, const TopologyGraph& graph, const PlatformOptions& options = {});

  const TopologyGraph& graph() const { return graph_; }
  simgrid::s4u::Host* gpu_host(int gpu) const { return gpu_hosts_.at(static_cast<size_t>(gpu)); }
  simgrid::s4u::Host* host_endpoint(int node) const { return host_endpoints_.at(static_cast<size_t>(node)); }
  // The SimGrid link carrying graph link `index` in one direction (`forward`: as in Hop).
  simgrid::s4u::Link* link(int index, bool forward) const;

 private:
  const TopologyGraph& graph_;
  std::vector<simgrid::s4u::Host*> gpu_hosts_;
  std::vector<simgrid::s4u::Host*> host_endpoints_;
  std::vector<simgrid::s4u::SplitDuplexLink*> links_;
};

}  // namespace trainsim::platform

#endif  // TRAINSIM_SIM_PLATFORM_SIMGRID_PLATFORM_H_
