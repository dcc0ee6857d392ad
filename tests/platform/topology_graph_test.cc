// The topology graph: names, lookups and the routes of every fabric kind on hand-drawn fixtures
// (tests/platform/fixtures/*.yaml describe them).
#include "sim/platform/topology_graph.h"

#include <cmath>
#include <map>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "sim/config/loader.h"
#include "tests/platform/platform_test_util.h"

namespace trainsim::platform {
namespace {

using trainsim::testing::gpu_route;
using trainsim::testing::load_fixture;
using trainsim::testing::route_names;

TEST(TopologyGraph, NamesAndLookups) {
  const TopologyGraph graph(load_fixture("fat-tree"));
  EXPECT_EQ(graph.gpu_count(), 8);
  EXPECT_EQ(graph.node_count(), 4);
  EXPECT_EQ(graph.gpu_name(5), "node2/gpu1");
  EXPECT_EQ(graph.gpu_by_name("node3/gpu1"), 7);
  EXPECT_EQ(graph.store().vertex(graph.host_vertex(2)).name, "node2/host");
  for (const char* bad : {"node4/gpu0", "node0/gpu2", "gpu0", "node0/gpu1x", "node-1/gpu0", ""}) {
    EXPECT_THROW(graph.gpu_by_name(bad), UnknownGpuError) << bad;
  }
  EXPECT_THROW(graph.gpu_vertex(8), UnknownGpuError);
}

TEST(TopologyGraph, InsideANode) {
  const TopologyGraph graph(load_fixture("base"));
  EXPECT_EQ(gpu_route(graph, "node0/gpu0", "node0/gpu1"), "node0/gpu0 > node0/nvswitch > node0/gpu1");
  EXPECT_DOUBLE_EQ(graph.path_latency_s(0, 1), 2e-6);  // the file's GPU-to-GPU latency
  EXPECT_EQ(route_names(graph, graph.gpu_vertex(0), graph.host_vertex(0)),
            "node0/gpu0 > node0/pcie0 > node0/cpu > node0/host");
  EXPECT_EQ(route_names(graph, graph.host_vertex(0), graph.gpu_vertex(1)),
            "node0/host > node0/cpu > node0/pcie0 > node0/gpu1");
  EXPECT_TRUE(graph.route(graph.gpu_vertex(1), graph.gpu_vertex(1)).empty());
}

TEST(TopologyGraph, NvlinkMeshIsDirect) {
  const TopologyGraph graph(load_fixture("topologies/hgx-a100-4gpu.yaml"));
  EXPECT_EQ(gpu_route(graph, "node0/gpu3", "node0/gpu1"), "node0/gpu3 > node0/gpu1");
  EXPECT_DOUBLE_EQ(graph.path_latency_s(3, 1), 1e-6);
}

TEST(TopologyGraph, PcieOnlyNodeUsesItsPeerToPeerPath) {
  const config::Topology topology =
      config::load_topology(std::string(TRAINSIM_SOURCE_DIR) + "/tests/platform/fixtures/base.yaml",
                            {config::parse_override("node.intra.kind=pcie")});
  const TopologyGraph graph(topology);
  EXPECT_EQ(gpu_route(graph, "node0/gpu0", "node0/gpu1"), "node0/gpu0 > node0/p2p > node0/gpu1");
}

TEST(TopologyGraph, FatTreeGoesUpToTheCommonSwitch) {
  const TopologyGraph graph(load_fixture("fat-tree"));
  // GPU i uses NIC i (both on the node's one PCIe switch).
  EXPECT_EQ(gpu_route(graph, "node0/gpu1", "node1/gpu0"),
            "node0/gpu1 > node0/pcie0 > node0/nic1 > fabric/l1/sw0 > node1/nic0 > node1/pcie0 > node1/gpu0");
  EXPECT_EQ(
      gpu_route(graph, "node0/gpu0", "node3/gpu1"),
      "node0/gpu0 > node0/pcie0 > node0/nic0 > fabric/l1/sw0 > fabric/l2/sw0 > fabric/l1/sw1 > node3/nic1 > "
      "node3/pcie0 > node3/gpu1");
  // PCIe 2 x 0.5 us each side, NIC links 1 us + half a switch, switch links 0.5 us + a switch.
  EXPECT_NEAR(graph.path_latency_s(0, 7), 0.5e-6 * 4 + 2 * 1.1e-6 + 2 * 0.7e-6, 1e-15);
}

// The fabric hops of the route between two GPUs.
std::vector<Link> fabric_hops(const TopologyGraph& graph, int src, int dst) {
  std::vector<Link> out;
  for (const Hop& hop : graph.route(graph.gpu_vertex(src), graph.gpu_vertex(dst))) {
    if (graph.store().link(hop.link).kind == LinkKind::kFabric) out.push_back(graph.store().link(hop.link));
  }
  return out;
}

// Fixture `name` with adaptive routing.
config::Topology adaptive_twin(const std::string& name) {
  config::Topology topology = load_fixture(name);
  topology.fabric.routing = config::FabricRouting::kAdaptive;
  return topology;
}

TEST(TopologyGraph, EcmpSplitsEachTrunkIntoItsCables) {
  // Leaf trunks of 2 nodes x 2 NICs x 25 GB/s = 100 GB/s: one trunk of 4 cables when adaptive, 4
  // links of 25 GB/s with ECMP; nothing else changes.
  const TopologyGraph ecmp(load_fixture("fat-tree-ecmp"));
  const TopologyGraph adaptive(adaptive_twin("fat-tree-ecmp"));
  const auto fabric_links = [](const TopologyGraph& graph) {
    std::vector<Link> out;
    for (int l = 0; l < static_cast<int>(graph.store().link_count()); ++l) {
      if (graph.store().link(l).kind == LinkKind::kFabric) out.push_back(graph.store().link(l));
    }
    return out;
  };
  ASSERT_EQ(fabric_links(adaptive).size(), 2u);
  for (const Link& trunk : fabric_links(adaptive)) {
    EXPECT_DOUBLE_EQ(trunk.bandwidth_bytes_per_s, 100e9);
    EXPECT_EQ(trunk.cables, 4);
    EXPECT_EQ(trunk.cable, -1);
  }
  const std::vector<Link> cables = fabric_links(ecmp);
  ASSERT_EQ(cables.size(), 8u);
  for (size_t i = 0; i < cables.size(); ++i) {
    EXPECT_DOUBLE_EQ(cables[i].bandwidth_bytes_per_s, 25e9);
    EXPECT_EQ(cables[i].cables, 1);
    EXPECT_EQ(cables[i].cable, static_cast<int>(i % 4));
  }
  EXPECT_EQ(ecmp.store().link_count(), adaptive.store().link_count() + 6);
  EXPECT_THAT(ecmp.fabric_description(), ::testing::EndsWith(", ECMP over 8 cables (seed 0)"));
  EXPECT_DOUBLE_EQ(ecmp.fabric_bisection_bandwidth_bytes_per_s(),
                   adaptive.fabric_bisection_bandwidth_bytes_per_s());
}

TEST(TopologyGraph, EcmpTakesOneCableUpAndTheSameCableDown) {
  const TopologyGraph ecmp(load_fixture("fat-tree-ecmp"));
  const TopologyGraph adaptive(adaptive_twin("fat-tree-ecmp"));
  for (int src = 0; src < ecmp.gpu_count(); ++src) {
    for (int dst = 0; dst < ecmp.gpu_count(); ++dst) {
      // The same switches as the adaptive route; only the cable between them is chosen.
      ASSERT_EQ(route_names(ecmp, ecmp.gpu_vertex(src), ecmp.gpu_vertex(dst)),
                route_names(adaptive, adaptive.gpu_vertex(src), adaptive.gpu_vertex(dst)));
      const std::vector<Link> hops = fabric_hops(ecmp, src, dst);
      if (ecmp.node_of_gpu(src) / 2 == ecmp.node_of_gpu(dst) / 2) {
        EXPECT_TRUE(hops.empty());
        continue;
      }
      ASSERT_EQ(hops.size(), 2u);
      EXPECT_EQ(hops[0].cable, hops[1].cable) << src << " -> " << dst;
      EXPECT_NE(hops[0].index, hops[1].index);
    }
  }
}

TEST(TopologyGraph, EcmpSpreadsPairsEvenlyOverTheCables) {
  // The 256-GPU DGX H100 cluster: leaves of 6 nodes, trunks of 48 cables. Every GPU pair across
  // leaves hashed: each cable of a full leaf's trunk carries close to its share of the pairs going up.
  config::Topology topology = load_fixture("topologies/dgx-h100-cluster.yaml");
  topology.fabric.routing = config::FabricRouting::kEcmp;
  const TopologyGraph graph(topology);
  std::map<int, int> pairs_per_cable;  // link index -> pairs going up it, leaf 0
  int pairs = 0;
  for (int src = 0; src < 6 * 8; ++src) {
    for (int dst = 6 * 8; dst < graph.gpu_count(); ++dst) {
      const std::vector<Link> hops = fabric_hops(graph, src, dst);
      ASSERT_EQ(hops.size(), 2u);
      ++pairs_per_cable[hops[0].index];
      ++pairs;
    }
  }
  ASSERT_EQ(pairs_per_cable.size(), 48u);
  const double mean = static_cast<double>(pairs) / 48;  // 208 x 48 / 48 = 208 pairs
  for (const auto& [cable, count] : pairs_per_cable) {
    // Binomial with mean 208 and standard deviation 14: within 4 standard deviations.
    EXPECT_NEAR(count, mean, 4 * std::sqrt(mean)) << "cable link " << cable;
  }
}

TEST(TopologyGraph, EcmpRoutesAreDeterministicAndTheSeedRehashesThem) {
  config::Topology topology = load_fixture("fat-tree-ecmp");
  const TopologyGraph a(topology);
  const TopologyGraph b(topology);
  topology.fabric.ecmp_seed = 1;
  const TopologyGraph reseeded(topology);
  int moved = 0;
  for (int src = 0; src < a.gpu_count(); ++src) {
    for (int dst = 0; dst < a.gpu_count(); ++dst) {
      const std::vector<Link> first = fabric_hops(a, src, dst);
      const std::vector<Link> again = fabric_hops(b, src, dst);
      const std::vector<Link> other = fabric_hops(reseeded, src, dst);
      ASSERT_EQ(first.size(), again.size());
      for (size_t h = 0; h < first.size(); ++h) EXPECT_EQ(first[h].index, again[h].index);
      if (!first.empty() && first[0].index != other[0].index) ++moved;
    }
  }
  // 32 pairs cross leaves; with 4 cables a new seed moves about three quarters of them.
  EXPECT_GE(moved, 12);
}

TEST(TopologyGraph, DModKPicksTheCableByTheDestination) {
  // The 256-GPU DGX H100 cluster: leaves of 6 nodes x 8 NICs, 48 cables up from each full leaf. The
  // destination NIC's index d (GPU i uses NIC i) picks cable d mod 48 from every source, so the 48
  // NICs of a leaf are reached over its 48 distinct cables.
  config::Topology topology = load_fixture("topologies/dgx-h100-cluster.yaml");
  topology.fabric.routing = config::FabricRouting::kDModK;
  const TopologyGraph graph(topology);
  EXPECT_THAT(graph.fabric_description(), ::testing::EndsWith(", D-mod-K over 256 cables"));
  for (int src = 0; src < 6 * 8; src += 5) {
    for (int dst = 6 * 8; dst < 30 * 8; ++dst) {  // the full leaves 1-4
      const std::vector<Link> hops = fabric_hops(graph, src, dst);
      ASSERT_EQ(hops.size(), 2u);
      EXPECT_EQ(hops[0].cable, dst % 48) << src << " -> " << dst;
      EXPECT_EQ(hops[1].cable, dst % 48) << src << " -> " << dst;
    }
  }
}

TEST(TopologyGraph, RailOptimizedKeepsTrafficOnTheDestinationRail) {
  const TopologyGraph graph(load_fixture("rail"));
  EXPECT_EQ(
      gpu_route(graph, "node0/gpu1", "node1/gpu1"),
      "node0/gpu1 > node0/pcie0 > node0/nic1 > fabric/rail1/leaf0 > node1/nic1 > node1/pcie0 > node1/gpu1");
  // To another rail: NVLink to the local GPU of that rail first (PXN), then rail 1 only.
  EXPECT_EQ(gpu_route(graph, "node0/gpu0", "node2/gpu1"),
            "node0/gpu0 > node0/nvswitch > node0/gpu1 > node0/pcie0 > node0/nic1 > fabric/rail1/leaf0 > "
            "fabric/l2/sw0 > fabric/rail1/leaf1 > node2/nic1 > node2/pcie0 > node2/gpu1");
  EXPECT_EQ(
      route_names(graph, graph.host_vertex(0), graph.gpu_vertex(3)),
      "node0/host > node0/cpu > node0/pcie0 > node0/nic1 > fabric/rail1/leaf0 > node1/nic1 > node1/pcie0 > "
      "node1/gpu1");
}

TEST(TopologyGraph, DragonflyIsMinimal) {
  const TopologyGraph graph(load_fixture("dragonfly"));
  // Same group: one local hop.
  EXPECT_EQ(
      gpu_route(graph, "node0/gpu0", "node1/gpu0"),
      "node0/gpu0 > node0/pcie0 > node0/nic0 > fabric/g0/r0 > fabric/g0/r1 > node1/nic0 > node1/pcie0 > "
      "node1/gpu0");
  // Groups 0 and 1: their global link joins g0/r0 and g1/r1.
  EXPECT_EQ(
      gpu_route(graph, "node0/gpu0", "node2/gpu0"),
      "node0/gpu0 > node0/pcie0 > node0/nic0 > fabric/g0/r0 > fabric/g1/r1 > fabric/g1/r0 > node2/nic0 > "
      "node2/pcie0 > node2/gpu0");
  // Groups 0 and 3: local, global (g0/r1 - g3/r0), local.
  EXPECT_EQ(
      gpu_route(graph, "node0/gpu0", "node7/gpu0"),
      "node0/gpu0 > node0/pcie0 > node0/nic0 > fabric/g0/r0 > fabric/g0/r1 > fabric/g3/r0 > fabric/g3/r1 > "
      "node7/nic0 > node7/pcie0 > node7/gpu0");
}

TEST(TopologyGraph, TorusRoutesDimensionByDimensionTheShortWay) {
  const TopologyGraph graph(load_fixture("torus"));
  // node = x0 + 2 x1 on a 2 x 4 torus: node 7 is (1, 3), one step back from (1, 0) on dimension 1.
  EXPECT_EQ(gpu_route(graph, "node0/gpu0", "node7/gpu0"),
            "node0/gpu0 > node0/pcie0 > node0/nic0 > fabric/torus0.0 > fabric/torus1.0 > fabric/torus1.3 > "
            "node7/nic0 > node7/pcie0 > node7/gpu0");
  // Half way round: the + direction.
  EXPECT_EQ(gpu_route(graph, "node0/gpu0", "node4/gpu0"),
            "node0/gpu0 > node0/pcie0 > node0/nic0 > fabric/torus0.0 > fabric/torus0.1 > fabric/torus0.2 > "
            "node4/nic0 > node4/pcie0 > node4/gpu0");
  // The size-2 dimension has one link, crossed both ways.
  EXPECT_EQ(gpu_route(graph, "node1/gpu0", "node0/gpu0"),
            "node1/gpu0 > node1/pcie0 > node1/nic0 > fabric/torus1.0 > fabric/torus0.0 > node0/nic0 > "
            "node0/pcie0 > "
            "node0/gpu0");
}

TEST(TopologyGraph, NicsOnTheRootComplexAreSharedByPairsOfGpus) {
  const TopologyGraph graph(load_fixture("shared-root"));
  EXPECT_EQ(gpu_route(graph, "node0/gpu1", "node1/gpu2"),
            "node0/gpu1 > node0/pcie0 > node0/cpu > node0/nic0 > fabric/l1/sw0 > node1/nic1 > node1/cpu > "
            "node1/pcie1 > node1/gpu2");
}

TEST(TopologyGraph, DragonflyThatCannotJoinEveryPairOfGroupsIsAnInputError) {
  // 5 groups need 4 global ports per group; 2 routers x 1 port give 2. The loader refuses the file;
  // a topology built in code gets the same error from the graph.
  const std::string file = std::string(TRAINSIM_SOURCE_DIR) + "/tests/platform/fixtures/dragonfly.yaml";
  try {
    config::load_topology(file, {config::parse_override("fabric.groups=5"),
                                 config::parse_override("fabric.global_links_per_router=1")});
    ADD_FAILURE() << "the loader accepted it";
  } catch (const config::ConfigError& e) {
    ASSERT_EQ(e.diagnostics().size(), 1u);
    EXPECT_EQ(e.diagnostics()[0].path, "fabric.global_links_per_router");
    EXPECT_THAT(e.diagnostics()[0].message, ::testing::HasSubstr("raise global_links_per_router to 2"));
  }
  config::Topology topology = config::load_topology(file);
  topology.fabric.groups = 5;
  topology.fabric.global_links_per_router = 1;
  topology.fabric.nodes =
      topology.fabric.groups * topology.fabric.routers_per_group * topology.fabric.nodes_per_router;
  try {
    const TopologyGraph graph(topology);
    ADD_FAILURE() << "no error";
  } catch (const config::ConfigError& e) {
    ASSERT_EQ(e.diagnostics().size(), 1u);
    EXPECT_EQ(e.diagnostics()[0].path, "fabric.global_links_per_router");
    EXPECT_THAT(e.diagnostics()[0].message, ::testing::HasSubstr(">= 4"));
  }
}

TEST(TopologyGraph, RoutesAreDeterministic) {
  const TopologyGraph a(load_fixture("dragonfly"));
  const TopologyGraph b(load_fixture("dragonfly"));
  for (int src = 0; src < a.gpu_count(); ++src) {
    for (int dst = 0; dst < a.gpu_count(); ++dst) {
      ASSERT_EQ(route_names(a, a.gpu_vertex(src), a.gpu_vertex(dst)),
                route_names(b, b.gpu_vertex(src), b.gpu_vertex(dst)));
    }
  }
}

}  // namespace
}  // namespace trainsim::platform
