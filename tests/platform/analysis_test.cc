// `trainsim topo` numbers on small topologies of every fabric kind, worked out by hand (see the
// fixture files), and the bisection formulas checked against a max-flow min cut of the graph.
#include "sim/platform/analysis.h"

#include <boost/graph/push_relabel_max_flow.hpp>
#include <gtest/gtest.h>

#include "tests/platform/platform_test_util.h"

namespace trainsim::platform {
namespace {

using trainsim::testing::load_fixture;

struct Expected {
  const char* fixture;
  int gpus;
  int nodes;
  size_t vertices;
  size_t links;
  double intra_injection;
  double inter_injection;
  double nvlink_bisection;
  double fabric_bisection;
  int diameter;
};

// Per fixture, with the reasoning:
//  base        8 vertices (2 GPUs, NVSwitch, PCIe switch, CPU, host, 2 NICs), 8 links; one node.
//  fat-tree    4 x 8 + 3 switches; 4 x 8 + 8 NIC links + 2 leaf uplinks; each leaf carries 2 nodes x
//              50 GB/s / 2 (oversubscription) = 50 GB/s up, which is the cut between the halves;
//              GPU, PCIe, NIC, leaf, spine, leaf, NIC, PCIe, GPU = 8 hops.
//  rail        2 rails x 2 leaves + 1 spine; rail leaves non-blocking: 2 nodes x 2 rails x 25 GB/s;
//              PXN adds 2 NVLink hops: 10.
//  dragonfly   8 routers; 4 local + 6 global + 16 NIC links; 2 x 2 global links of 20 GB/s cross
//              between halves of groups; NIC, local, global, local, NIC + 4 PCIe hops = 9.
//  torus       8 routers; 4 links on the size-2 dimension + 8 on the size-4 one + 16 NIC links;
//              cutting dimension 1 crosses 2 rings x 2 links of 10 GB/s; 3 router hops + 6 = 9.
//  shared-root NICs on the root complex: 2 GPUs share a NIC (12.5 GB/s each); 2 x 100 GB/s NVLink
//              bisection for 4 GPUs.
const Expected kExpected[] = {
    {"base", 2, 1, 8, 8, 100e9, 0, 100e9, 0, 2},
    {"fat-tree", 8, 4, 35, 42, 100e9, 25e9, 100e9, 50e9, 8},
    {"rail", 8, 4, 37, 44, 100e9, 25e9, 100e9, 100e9, 10},
    {"dragonfly", 16, 8, 72, 90, 100e9, 25e9, 100e9, 80e9, 9},
    {"torus", 16, 8, 72, 92, 100e9, 25e9, 100e9, 40e9, 9},
    {"shared-root", 8, 2, 23, 30, 100e9, 12.5e9, 200e9, 50e9, 8},
    {"topologies/hgx-a100-4gpu.yaml", 4, 1, 12, 17, 300e9, 0, 400e9, 0, 1},
};

TEST(Analysis, SummaryOfEachFixture) {
  for (const Expected& e : kExpected) {
    SCOPED_TRACE(e.fixture);
    const TopologyGraph graph(load_fixture(e.fixture));
    const TopologySummary s = summarize(graph);
    EXPECT_EQ(s.gpus, e.gpus);
    EXPECT_EQ(s.nodes, e.nodes);
    EXPECT_EQ(s.vertices, e.vertices);
    EXPECT_EQ(s.links, e.links);
    EXPECT_EQ(s.cables, e.links);  // no trunk of these needs more than one cable
    EXPECT_DOUBLE_EQ(s.intra_node_injection_bytes_per_s, e.intra_injection);
    EXPECT_DOUBLE_EQ(s.inter_node_injection_bytes_per_s, e.inter_injection);
    EXPECT_DOUBLE_EQ(s.nvlink_bisection_bytes_per_s, e.nvlink_bisection);
    EXPECT_DOUBLE_EQ(s.fabric_bisection_bytes_per_s, e.fabric_bisection);
    EXPECT_EQ(s.diameter_hops, e.diameter);
  }
}

// Max flow from the NICs of the first half of the nodes to those of the second half over the NIC
// and fabric links: the capacity of the smallest cut between the two halves.
double cut_between_halves(const TopologyGraph& graph) {
  using Traits = boost::adjacency_list_traits<boost::vecS, boost::vecS, boost::directedS>;
  using FlowGraph = boost::adjacency_list<
      boost::vecS, boost::vecS, boost::directedS, boost::no_property,
      boost::property<boost::edge_capacity_t, double,
                      boost::property<boost::edge_residual_capacity_t, double,
                                      boost::property<boost::edge_reverse_t, Traits::edge_descriptor>>>>;
  const size_t n = graph.store().vertex_count();
  FlowGraph flow(n + 2);
  auto capacity = boost::get(boost::edge_capacity, flow);
  auto reverse = boost::get(boost::edge_reverse, flow);
  const auto arc = [&](size_t u, size_t v, double c) {
    const auto e = boost::add_edge(u, v, flow).first;
    const auto r = boost::add_edge(v, u, flow).first;
    capacity[e] = c;
    capacity[r] = 0;
    reverse[e] = r;
    reverse[r] = e;
  };
  double total = 0;  // more than any cut: the capacity of the source and sink arcs
  for (size_t l = 0; l < graph.store().link_count(); ++l) {
    const Link& link = graph.store().link(static_cast<int>(l));
    if (link.kind != LinkKind::kNic && link.kind != LinkKind::kFabric) continue;
    arc(graph.store().first(link.index), graph.store().second(link.index), link.bandwidth_bytes_per_s);
    arc(graph.store().second(link.index), graph.store().first(link.index), link.bandwidth_bytes_per_s);
    total += 2 * link.bandwidth_bytes_per_s;
  }
  const size_t source = n;
  const size_t sink = n + 1;
  for (size_t v = 0; v < n; ++v) {
    const Vertex& vertex = graph.store().vertex(v);
    if (vertex.kind != VertexKind::kNic) continue;
    // Not 1e30: flows of ~1e10 added to it would round away, and the flow would not balance.
    if (vertex.node < graph.node_count() / 2) {
      arc(source, v, total);
    } else {
      arc(v, sink, total);
    }
  }
  return boost::push_relabel_max_flow(flow, source, sink);
}

TEST(Analysis, BisectionFormulasMatchTheMinimumCutBetweenHalves) {
  for (const char* fixture : {"fat-tree", "rail", "dragonfly", "torus", "shared-root", "fast-nic"}) {
    SCOPED_TRACE(fixture);
    const TopologyGraph graph(load_fixture(fixture));
    EXPECT_NEAR(cut_between_halves(graph), graph.fabric_bisection_bandwidth_bytes_per_s(), 1);
  }
}

TEST(Analysis, ShippedLargeTopologies) {
  const TopologyGraph rail(load_fixture("topologies/h100-rail-16k.yaml"));
  const TopologySummary s = summarize(rail);
  EXPECT_EQ(s.gpus, 16384);
  EXPECT_EQ(s.nodes, 2048);
  EXPECT_DOUBLE_EQ(s.inter_node_injection_bytes_per_s, 50e9);         // one 400 Gb/s NIC per GPU
  EXPECT_DOUBLE_EQ(s.fabric_bisection_bytes_per_s, 1024 * 8 * 50e9);  // non-blocking
  EXPECT_EQ(s.diameter_hops, 12);  // PXN (2) + PCIe (2) + NIC, 4 switch links, NIC + PCIe (2)

  const TopologyGraph nvl72(load_fixture("topologies/gb200-nvl72.yaml"));
  const TopologySummary t = summarize(nvl72);
  EXPECT_EQ(t.gpus, 72);
  EXPECT_DOUBLE_EQ(t.intra_node_injection_bytes_per_s, 900e9);
  EXPECT_DOUBLE_EQ(t.nvlink_bisection_bytes_per_s, 36 * 900e9);
  EXPECT_EQ(t.diameter_hops, 2);
}

TEST(Analysis, PathReport) {
  const TopologyGraph graph(load_fixture("fat-tree"));
  const PathReport path = describe_path(graph, 0, 7);
  EXPECT_EQ(path.from, "node0/gpu0");
  EXPECT_EQ(path.to, "node3/gpu1");
  ASSERT_EQ(path.hops.size(), 8u);
  EXPECT_EQ(path.hops[0].kind, LinkKind::kPcie);
  EXPECT_EQ(path.hops[2].from, "node0/nic0");
  EXPECT_EQ(path.hops[2].kind, LinkKind::kNic);
  EXPECT_DOUBLE_EQ(path.hops[3].bandwidth_bytes_per_s, 50e9);  // leaf trunk: 2 nodes x 50 GB/s / 2
  EXPECT_NEAR(path.latency_s, 5.6e-6, 1e-15);
  EXPECT_DOUBLE_EQ(path.bottleneck_bytes_per_s, 25e9);
  EXPECT_TRUE(describe_path(graph, 3, 3).hops.empty());
  EXPECT_THROW(describe_path(graph, 0, 8), UnknownGpuError);
}

}  // namespace
}  // namespace trainsim::platform
