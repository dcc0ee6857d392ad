// Helpers for platform and collective tests: load the hand-computable fixture topologies and
// render routes as readable strings.
#ifndef TRAINSIM_TESTS_PLATFORM_PLATFORM_TEST_UTIL_H_
#define TRAINSIM_TESTS_PLATFORM_PLATFORM_TEST_UTIL_H_

#include <string>
#include <vector>

#include "sim/config/topology.h"
#include "sim/platform/topology_graph.h"

namespace trainsim::testing {

// tests/platform/fixtures/<name>.yaml, or any path relative to the repository root when `name`
// contains a '/'.
config::Topology load_fixture(const std::string& name);

// "node0/gpu0 > node0/nvswitch > node0/gpu1": the vertices a route visits.
std::string route_names(const platform::TopologyGraph& graph, platform::VertexId src, platform::VertexId dst);

// The route between two GPUs given by name.
std::string gpu_route(const platform::TopologyGraph& graph, const std::string& src, const std::string& dst);

}  // namespace trainsim::testing

#endif  // TRAINSIM_TESTS_PLATFORM_PLATFORM_TEST_UTIL_H_
