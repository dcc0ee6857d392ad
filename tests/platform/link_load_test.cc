// Link load recorded from the flows FlowRunner plays (cost/link_load.h): bytes on exactly the route's
// directions, busy time as the union of the flows' intervals, utilization while busy 1 on the link
// that limits a flow and its bandwidth share elsewhere, tiers named by endpoint and switch level,
// traffic charged to the source GPU's group, the member-side and direct paths recording alike. Each
// test is its own process (one SimGrid engine per process).
#include "sim/cost/link_load.h"

#include <algorithm>
#include <functional>
#include <stdexcept>
#include <string>
#include <utility>

#include <gtest/gtest.h>
#include <simgrid/s4u/Actor.hpp>

#include "sim/cost/flow_runner.h"
#include "tests/platform/platform_test_util.h"

namespace trainsim::cost {
namespace {

namespace sg4 = simgrid::s4u;
using platform::Platform;
using platform::TopologyGraph;
using trainsim::testing::load_fixture;

// One flow's schedule: a single phase, no latency.
CollectiveSchedule one_phase(std::vector<Flow> flows) {
  CollectiveSchedule s;
  for (const Flow& f : flows) {
    for (const int gpu : {f.src_gpu, f.dst_gpu}) {
      if (std::find(s.members.begin(), s.members.end(), gpu) == s.members.end()) s.members.push_back(gpu);
    }
  }
  s.phases.push_back(Phase{std::move(flows), 0});
  return s;
}

class LinkLoadTest : public ::testing::Test {
 protected:
  void build(const std::string& fixture, std::vector<int> group_of_gpu = {}) {
    build(load_fixture(fixture), std::move(group_of_gpu));
  }
  void build(const config::Topology& topology, std::vector<int> group_of_gpu = {}) {
    graph_ = std::make_unique<TopologyGraph>(topology);
    engine_ = platform::create_engine();
    platform_ = std::make_unique<Platform>(*engine_, *graph_);
    load_ = std::make_unique<LinkLoad>(*platform_, std::move(group_of_gpu));
  }
  // Runs `body` in an actor with a runner recording into load_, then the simulation to its end.
  void run(const std::function<void(const FlowRunner&)>& body,
           size_t direct_flow_limit = FlowRunner::kDirectFlowLimit) {
    FlowRunner runner(*platform_, direct_flow_limit);
    runner.record_into(load_.get());
    sg4::Actor::create("test", platform_->gpu_host(0), [&] { body(runner); });
    engine_->run();
  }
  // The summary over the simulated time, every loaded direction listed.
  LinkLoadSummary summary() const { return load_->summarize(sg4::Engine::get_clock(), 1'000'000); }
  // The names of the directions of the route from GPU `src` to GPU `dst`.
  std::vector<std::string> route_names(int src, int dst) const {
    std::vector<std::string> out;
    const platform::GraphStore& store = graph_->store();
    for (const platform::Hop& hop : graph_->route(graph_->gpu_vertex(src), graph_->gpu_vertex(dst))) {
      out.push_back(store.vertex(store.from(hop)).name + " -> " + store.vertex(store.to(hop)).name);
    }
    return out;
  }
  // By value: a reference into a temporary summary would dangle.
  static LinkDirectionLoad find(const LinkLoadSummary& s, const std::string& name) {
    const auto it = std::find_if(s.busiest.begin(), s.busiest.end(),
                                 [&](const LinkDirectionLoad& l) { return l.name == name; });
    if (it == s.busiest.end()) throw std::out_of_range("no loaded direction " + name);
    return *it;
  }
  static LinkTierLoad tier(const LinkLoadSummary& s, const std::string& name) {
    const auto it =
        std::find_if(s.tiers.begin(), s.tiers.end(), [&](const LinkTierLoad& t) { return t.tier == name; });
    if (it == s.tiers.end()) throw std::out_of_range("no tier " + name);
    return *it;
  }

  std::unique_ptr<TopologyGraph> graph_;
  std::unique_ptr<sg4::Engine> engine_;
  std::unique_ptr<Platform> platform_;
  std::unique_ptr<LinkLoad> load_;
};

// node0/gpu0 -> node3/gpu1 crosses PCIe (32 GB/s), the NIC (25 GB/s: the bottleneck), the leaf
// uplinks and back down: 2.5 GB take 0.1 s, during which every direction on the route is busy.
TEST_F(LinkLoadTest, ALoneFlowLoadsExactlyItsRoute) {
  build("fat-tree");
  run([](const FlowRunner& runner) { runner.run(one_phase({Flow{0, 7, 2.5e9}}), 0); });
  const LinkLoadSummary s = summary();
  const std::vector<std::string> route = route_names(0, 7);
  EXPECT_EQ(s.directions, static_cast<int>(2 * graph_->store().link_count()));
  ASSERT_EQ(s.loaded, static_cast<int>(route.size()));
  EXPECT_NEAR(s.window_s, 0.1, 1e-9);
  for (const std::string& name : route) {
    const LinkDirectionLoad& l = find(s, name);
    EXPECT_DOUBLE_EQ(l.bytes, 2.5e9) << name;
    EXPECT_NEAR(l.busy_s, 0.1, 1e-9) << name;
    EXPECT_NEAR(l.utilization_when_busy, 25e9 / l.bandwidth_bytes_per_s, 1e-9) << name;
    EXPECT_NEAR(l.utilization, l.utilization_when_busy, 1e-9) << name;
  }
  EXPECT_NEAR(find(s, "node0/nic0 -> fabric/l1/sw0").utilization_when_busy, 1, 1e-9);
  EXPECT_NEAR(find(s, "node0/gpu0 -> node0/pcie0").utilization_when_busy, 25.0 / 32.0, 1e-9);
  // The busiest come first: the NIC links at full bandwidth, before the faster links.
  EXPECT_EQ(s.busiest.front().tier, "nic: nic -> l1");
}

TEST_F(LinkLoadTest, TiersAreNamedByLinkKindEndpointsAndSwitchLevel) {
  build("fat-tree");
  run([](const FlowRunner& runner) { runner.run(one_phase({Flow{0, 7, 1e9}}), 0); });
  const LinkLoadSummary s = summary();
  for (const char* name :
       {"pcie: gpu -> pcie-switch", "pcie: pcie-switch -> nic", "nic: nic -> l1", "fabric: l1 -> l2",
        "fabric: l2 -> l1", "nic: l1 -> nic", "pcie: nic -> pcie-switch", "pcie: pcie-switch -> gpu"}) {
    EXPECT_EQ(tier(s, name).loaded, 1) << name;
    EXPECT_DOUBLE_EQ(tier(s, name).bytes, 1e9) << name;
  }
  // Four nodes of two GPUs: eight GPU links into the NVSwitches, none loaded (the flow leaves the node).
  EXPECT_EQ(tier(s, "nvlink: gpu -> nvswitch").directions, 8);
  EXPECT_EQ(tier(s, "nvlink: gpu -> nvswitch").loaded, 0);
  EXPECT_EQ(tier(s, "nvlink: gpu -> nvswitch").busiest, "");
  int directions = 0;
  for (const LinkTierLoad& t : s.tiers) directions += t.directions;
  EXPECT_EQ(directions, s.directions);
}

// Two flows sharing the NVLink at once: twice the bytes in twice the time, busy all along, at full
// bandwidth. The later flow, after an idle gap, adds its own busy time, not the gap.
TEST_F(LinkLoadTest, BusyTimeIsTheUnionOfTheFlowsIntervals) {
  build("base");
  run([](const FlowRunner& runner) {
    runner.run(one_phase({Flow{0, 1, 1e9}, Flow{0, 1, 1e9}}), 0);  // 0.02 s together
    sg4::this_actor::sleep_for(0.03);
    runner.run(one_phase({Flow{0, 1, 1e9}}), 0);  // 0.01 s
  });
  const LinkLoadSummary s = summary();
  EXPECT_NEAR(s.window_s, 0.06, 1e-9);
  const LinkDirectionLoad& l = find(s, "node0/gpu0 -> node0/nvswitch");
  EXPECT_DOUBLE_EQ(l.bytes, 3e9);
  EXPECT_NEAR(l.busy_s, 0.03, 1e-9);
  EXPECT_NEAR(l.utilization_when_busy, 1, 1e-9);
  EXPECT_NEAR(l.utilization, 0.5, 1e-9);
  EXPECT_NEAR(tier(s, "nvlink: gpu -> nvswitch").mean_utilization, 0.5, 1e-9);  // the one loaded direction
}

// Enough separate flows that their intervals are merged while recording, several times.
TEST_F(LinkLoadTest, ManyFlowsMergeToTheSameBusyTime) {
  build("base");
  run([](const FlowRunner& runner) {
    for (int i = 0; i < 300; ++i) {
      runner.run(one_phase({Flow{0, 1, 1e8}}), 0);  // 1 ms each
      sg4::this_actor::sleep_for(1e-3);
    }
  });
  const LinkLoadSummary s = summary();
  const LinkDirectionLoad& l = find(s, "node0/nvswitch -> node0/gpu1");
  EXPECT_DOUBLE_EQ(l.bytes, 300 * 1e8);
  EXPECT_NEAR(l.busy_s, 0.3, 1e-9);
  EXPECT_NEAR(l.utilization, 0.5, 1e-6);
}

TEST_F(LinkLoadTest, HostCopiesLoadThePcieTreeInTheirDirection) {
  build("base");
  run([](const FlowRunner& runner) {
    runner.host_copy(1, CopyDirection::kDeviceToHost, 3.2e9);  // 0.1 s over the 32 GB/s PCIe links
  });
  const LinkLoadSummary s = summary();
  EXPECT_EQ(s.loaded, 3);
  EXPECT_NEAR(find(s, "node0/gpu1 -> node0/pcie0").utilization_when_busy, 1, 1e-9);
  EXPECT_DOUBLE_EQ(tier(s, "pcie-uplink: pcie-switch -> cpu").bytes, 3.2e9);
  EXPECT_NEAR(find(s, "node0/cpu -> node0/host").utilization_when_busy, 0.32, 1e-9);  // 100 GB/s memory
  EXPECT_EQ(tier(s, "host-memory: host -> cpu").loaded, 0);
}

// GPU 0 is group 0, GPU 1 group 1: each one's traffic to the other is its own on the shared links.
TEST_F(LinkLoadTest, TrafficIsChargedToTheSourceGpusGroup) {
  build("base", {0, 1});
  run([](const FlowRunner& runner) { runner.run(one_phase({Flow{0, 1, 1e9}, Flow{1, 0, 3e9}}), 0); });
  const LinkLoadSummary s = summary();
  EXPECT_EQ(load_->groups(), 2);
  EXPECT_EQ(find(s, "node0/gpu0 -> node0/nvswitch").bytes_by_group, (std::vector<double>{1e9, 0}));
  EXPECT_EQ(find(s, "node0/nvswitch -> node0/gpu0").bytes_by_group, (std::vector<double>{0, 3e9}));
}

// Two flows of `bytes` from leaf 0 to leaf 1 of the ECMP fixture, from different NICs to different
// NICs, whose hashes put them on the same cable (`collide`) or on different ones; and that cable's
// name going up.
std::pair<std::vector<Flow>, std::string> ecmp_pair(const TopologyGraph& graph, bool collide, double bytes) {
  const platform::GraphStore& store = graph.store();
  const auto up_cable = [&](int src, int dst) {
    for (const platform::Hop& hop : graph.route(graph.gpu_vertex(src), graph.gpu_vertex(dst))) {
      if (store.link(hop.link).kind == platform::LinkKind::kFabric) return hop;
    }
    throw std::logic_error("no fabric hop");
  };
  // GPUs 0-3 hang off leaf 0, 4-7 off leaf 1; GPU i uses its own NIC.
  for (int a = 0; a < 4; ++a) {
    for (int b = a + 1; b < 4; ++b) {
      for (int c = 4; c < 8; ++c) {
        for (int d = 4; d < 8; ++d) {
          const platform::Hop first = up_cable(a, c);
          if (c != d && (first.link == up_cable(b, d).link) == collide) {
            return {{Flow{a, c, bytes}, Flow{b, d, bytes}},
                    store.vertex(store.from(first)).name + " -> " + store.vertex(store.to(first)).name +
                        " cable " + std::to_string(store.link(first.link).cable)};
          }
        }
      }
    }
  }
  throw std::logic_error("no such pair");
}

// NIC-limited flows at 25 GB/s over cables of 25 GB/s: two flows hashed onto one cable take twice
// as long, and the cable shows both at full bandwidth.
TEST_F(LinkLoadTest, EcmpFlowsHashedOntoOneCableShareIt) {
  build("fat-tree-ecmp");
  const std::pair<std::vector<Flow>, std::string> pair = ecmp_pair(*graph_, true, 2.5e9);
  const std::string& cable = pair.second;
  run([&](const FlowRunner& runner) { runner.run(one_phase(pair.first), 0); });
  const LinkLoadSummary s = summary();
  EXPECT_NEAR(s.window_s, 0.2, 1e-9);
  const LinkDirectionLoad& l = find(s, cable);
  EXPECT_DOUBLE_EQ(l.bytes, 5e9);
  EXPECT_NEAR(l.utilization_when_busy, 1, 1e-9);
  EXPECT_EQ(tier(s, "fabric: l1 -> l2").directions, 8);  // 2 leaves x 4 cables
  EXPECT_EQ(tier(s, "fabric: l1 -> l2").loaded, 1);
}

TEST_F(LinkLoadTest, EcmpFlowsOnDifferentCablesRunAtTheNicsSpeed) {
  build("fat-tree-ecmp");
  run([&](const FlowRunner& runner) { runner.run(one_phase(ecmp_pair(*graph_, false, 2.5e9).first), 0); });
  const LinkLoadSummary s = summary();
  EXPECT_NEAR(s.window_s, 0.1, 1e-9);
  EXPECT_EQ(tier(s, "fabric: l1 -> l2").loaded, 2);
}

// The colliding pair with adaptive routing: the trunk's 100 GB/s carries both at the NICs' speed.
TEST_F(LinkLoadTest, AdaptiveRoutingSharesTheWholeTrunk) {
  config::Topology topology = load_fixture("fat-tree-ecmp");
  const std::vector<Flow> flows = ecmp_pair(TopologyGraph(topology), true, 2.5e9).first;
  topology.fabric.routing = config::FabricRouting::kAdaptive;
  build(topology);
  run([&](const FlowRunner& runner) { runner.run(one_phase(flows), 0); });
  const LinkLoadSummary s = summary();
  EXPECT_NEAR(s.window_s, 0.1, 1e-9);
  EXPECT_NEAR(find(s, "fabric/l1/sw0 -> fabric/l2/sw0").utilization_when_busy, 0.5, 1e-9);
}

// D-mod-K on the 256-GPU DGX H100 cluster (NICs and cables of 50 GB/s): flows from leaf 0 to the
// same position in two other leaves (node 6 and node 12, GPU 0) share an uplink cable and take
// twice as long; to different positions (node 6 GPU 0, node 13 GPU 0) they run at the NICs' speed.
TEST_F(LinkLoadTest, DModKFlowsToTheSamePlaceInOtherLeavesShareACable) {
  config::Topology topology = load_fixture("topologies/dgx-h100-cluster.yaml");
  topology.fabric.routing = config::FabricRouting::kDModK;
  build(topology);
  double same_place_s = 0;
  double different_places_s = 0;
  run([&](const FlowRunner& runner) {
    runner.run(one_phase({Flow{0, 6 * 8, 2.5e9}, Flow{8, 12 * 8, 2.5e9}}), 0);
    same_place_s = sg4::Engine::get_clock();
    runner.run(one_phase({Flow{0, 6 * 8, 2.5e9}, Flow{8, 13 * 8, 2.5e9}}), 0);
    different_places_s = sg4::Engine::get_clock() - same_place_s;
  });
  EXPECT_NEAR(same_place_s, 0.1, 1e-9);
  EXPECT_NEAR(different_places_s, 0.05, 1e-9);
  const LinkLoadSummary s = summary();
  const LinkDirectionLoad& cable = find(s, "fabric/l1/sw0 -> fabric/l2/sw0 cable 0");
  EXPECT_DOUBLE_EQ(cable.bytes, 3 * 2.5e9);  // both flows of the first phase, one of the second
}

// The member side (a helper actor per GPU, mailbox flows) records every flow of the schedule on its
// route, as adding them one by one does.
TEST_F(LinkLoadTest, MemberSideRecordsEveryFlowOfTheSchedule) {
  build("fat-tree");
  const CollectiveModel model{view_of(*graph_), {}};
  const CollectiveSchedule ring =
      plan_collective(config::CollectiveKind::kAllReduce, {0, 1, 2, 3, 4, 5, 6, 7}, 1e9, model);
  run([&](const FlowRunner& runner) { runner.run(ring, 0); }, /*direct_flow_limit=*/0);
  const LinkLoadSummary member = summary();
  LinkLoad direct_load(*platform_);
  double bytes = 0;
  for (const Phase& phase : ring.phases) {
    for (const Flow& f : phase.flows) {
      direct_load.add_flow(f.src_gpu, f.dst_gpu, f.bytes, 0, 1);
      bytes += f.bytes;
    }
  }
  const LinkLoadSummary direct = direct_load.summarize(1, 1'000'000);
  ASSERT_EQ(member.loaded, direct.loaded);
  ASSERT_GT(bytes, 0);
  for (const LinkDirectionLoad& l : direct.busiest)
    EXPECT_DOUBLE_EQ(find(member, l.name).bytes, l.bytes) << l.name;
}

}  // namespace
}  // namespace trainsim::cost
