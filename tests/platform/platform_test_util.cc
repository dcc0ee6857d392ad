#include "tests/platform/platform_test_util.h"

#include <filesystem>

#include "sim/config/loader.h"

namespace trainsim::testing {

config::Topology load_fixture(const std::string& name) {
  const std::filesystem::path root(TRAINSIM_SOURCE_DIR);
  const std::filesystem::path file =
      name.find('/') == std::string::npos ? root / "tests/platform/fixtures" / (name + ".yaml") : root / name;
  return config::load_topology(file);
}

std::string route_names(const platform::TopologyGraph& graph, platform::VertexId src,
                        platform::VertexId dst) {
  std::string out = graph.store().vertex(src).name;
  for (const platform::Hop& hop : graph.route(src, dst)) {
    out += " > " + graph.store().vertex(graph.store().to(hop)).name;
  }
  return out;
}

std::string gpu_route(const platform::TopologyGraph& graph, const std::string& src, const std::string& dst) {
  return route_names(graph, graph.gpu_vertex(graph.gpu_by_name(src)),
                     graph.gpu_vertex(graph.gpu_by_name(dst)));
}

}  // namespace trainsim::testing
