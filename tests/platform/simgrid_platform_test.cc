// The SimGrid platform: exact alpha-beta cost of a lone transfer, fair sharing of a link whatever
// the route lengths, and host copies contending with NIC traffic exactly where they share a PCIe
// link. Each test is its own process (one SimGrid engine per process).
#include "sim/platform/simgrid_platform.h"

#include <gtest/gtest.h>
#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Comm.hpp>

#include "sim/cost/flow_runner.h"
#include "tests/platform/platform_test_util.h"

namespace trainsim::platform {
namespace {

namespace sg4 = simgrid::s4u;
using cost::CopyDirection;
using cost::Flow;
using cost::FlowRunner;
using trainsim::testing::load_fixture;

// A topology graph, its engine and platform, and a helper running code in one actor.
class PlatformTest : public ::testing::Test {
 protected:
  void build(const std::string& fixture) {
    graph_ = std::make_unique<TopologyGraph>(load_fixture(fixture));
    engine_ = create_engine();
    platform_ = std::make_unique<Platform>(*engine_, *graph_);
  }
  // Runs `body` in an actor on GPU 0's host until the simulation ends.
  void run(const std::function<void(const FlowRunner&)>& body) {
    const FlowRunner runner(*platform_);
    sg4::Actor::create("test", platform_->gpu_host(0), [&] { body(runner); });
    engine_->run();
  }
  // Starts `comms` and returns when each completed, relative to now.
  static std::vector<double> finish_times(const std::vector<sg4::CommPtr>& comms) {
    const double start = sg4::Engine::get_clock();
    sg4::Comm::wait_all(comms);
    std::vector<double> out;
    for (const sg4::CommPtr& c : comms) out.push_back(c->get_finish_time() - start);
    return out;
  }

  std::unique_ptr<TopologyGraph> graph_;
  std::unique_ptr<sg4::Engine> engine_;
  std::unique_ptr<Platform> platform_;
};

TEST_F(PlatformTest, HostsAndLinksMirrorTheGraph) {
  build("fat-tree");
  EXPECT_EQ(platform_->gpu_host(7)->get_name(), "node3/gpu1");
  EXPECT_EQ(platform_->host_endpoint(2)->get_name(), "node2/host");
  EXPECT_EQ(engine_->get_host_count(), 8u + 4u);
  const auto ours = [](sg4::Link* l) {
    return l->get_name().rfind("link", 0) == 0;
  };  // not SimGrid's loopback
  EXPECT_EQ(engine_->get_filtered_links(ours).size(), 2 * graph_->store().link_count());  // one per direction
  EXPECT_EQ(platform_->link(0, true)->get_latency(), 0.0);
  std::vector<sg4::Link*> links;
  double latency = 0;
  platform_->gpu_host(0)->route_to(platform_->gpu_host(7), links, &latency);
  ASSERT_EQ(links.size(), graph_->route(graph_->gpu_vertex(0), graph_->gpu_vertex(7)).size());
  EXPECT_EQ(links.front(),
            platform_->link(graph_->route(graph_->gpu_vertex(0), graph_->gpu_vertex(7)).front().link, true));
}

TEST_F(PlatformTest, SingleTransferCostsLatencyPlusSizeOverBandwidth) {
  build("base");
  const cost::CollectiveModel model{cost::view_of(*graph_), {}};
  const cost::CollectiveSchedule send = cost::plan_point_to_point(0, 1, 1e9, model);
  const std::vector<double> durations = cost::run_sequentially(*engine_, *platform_, {send});
  // 2 us GPU-to-GPU latency + 1 GB over the 100 GB/s NVLink.
  EXPECT_NEAR(durations.at(0), 2e-6 + 1e9 / 100e9, 1e-9);
}

TEST_F(PlatformTest, TwoFlowsOnOneLinkTakeTwiceAsLong) {
  build("base");
  run([&](const FlowRunner& runner) {
    const std::vector<double> alone = finish_times(runner.start_transfers({Flow{0, 1, 1e9}}));
    EXPECT_NEAR(alone.at(0), 0.01, 1e-9);
    const std::vector<double> shared =
        finish_times(runner.start_transfers({Flow{0, 1, 1e9}, Flow{0, 1, 1e9}}));
    EXPECT_NEAR(shared.at(0), 0.02, 1e-9);
    EXPECT_NEAR(shared.at(1), 0.02, 1e-9);
  });
}

// A 3-link host copy and an 8-link transfer from another node meet on one PCIe link that limits
// both; with latency on the links CM02 would give the short route most of it (RTT weighting).
TEST_F(PlatformTest, FlowsOfDifferentRouteLengthsShareALinkEqually) {
  build("fast-nic");
  run([&](const FlowRunner& runner) {
    std::vector<sg4::CommPtr> comms{runner.start_host_copy(0, CopyDirection::kHostToDevice, 1.6e9)};
    const std::vector<sg4::CommPtr> remote =
        runner.start_transfers({Flow{6, 0, 1.6e9}});  // node3/gpu0 -> node0/gpu0
    comms.insert(comms.end(), remote.begin(), remote.end());
    const std::vector<double> t = finish_times(comms);
    EXPECT_NEAR(t.at(0), 1.6e9 / 16e9, 1e-9);  // half of the 32 GB/s PCIe link each
    EXPECT_NEAR(t.at(1), 1.6e9 / 16e9, 1e-9);
  });
}

// GPU 0 and NIC 0 sit behind the same PCIe switch; GPUDirect traffic to the NIC stays below the
// switch, but it crosses GPU 0's own PCIe link, as a copy to host memory does.
TEST_F(PlatformTest, HostCopyAndNicTrafficContendOnASharedPcieLink) {
  build("fat-tree");
  run([&](const FlowRunner& runner) {
    const double copy_alone =
        finish_times({runner.start_host_copy(0, CopyDirection::kDeviceToHost, 3.2e9)}).at(0);
    EXPECT_NEAR(copy_alone, 3.2e9 / 32e9, 1e-9);
    std::vector<sg4::CommPtr> both{runner.start_host_copy(0, CopyDirection::kDeviceToHost, 3.2e9)};
    both.push_back(runner.start_transfers({Flow{0, 2, 3.2e9}}).at(0));  // node0/gpu0 -> node1/gpu0 via NIC 0
    const std::vector<double> t = finish_times(both);
    EXPECT_NEAR(t.at(0), 3.2e9 / 16e9, 1e-9);  // the GPU's 32 GB/s link split in two
    EXPECT_NEAR(t.at(1), 3.2e9 / 16e9, 1e-9);
  });
}

TEST_F(PlatformTest, HostCopyIsNotSlowedByNicTrafficOfAnotherGpu) {
  build("fat-tree");
  run([&](const FlowRunner& runner) {
    std::vector<sg4::CommPtr> both{runner.start_host_copy(0, CopyDirection::kDeviceToHost, 3.2e9)};
    both.push_back(runner.start_transfers({Flow{1, 3, 2.5e9}}).at(0));  // node0/gpu1 -> node1/gpu1 via NIC 1
    const std::vector<double> t = finish_times(both);
    EXPECT_NEAR(t.at(0), 3.2e9 / 32e9, 1e-9);  // full PCIe bandwidth
    EXPECT_NEAR(t.at(1), 2.5e9 / 25e9, 1e-9);  // full NIC bandwidth
  });
}

// With the NICs on the root complex, GPU 1's traffic to its NIC climbs the uplink of the PCIe
// switch it shares with GPU 0, which GPU 0's copy to host memory also climbs.
TEST_F(PlatformTest, NicTrafficThroughTheRootComplexSharesTheSwitchUplink) {
  build("shared-root");
  run([&](const FlowRunner& runner) {
    std::vector<sg4::CommPtr> both{runner.start_host_copy(0, CopyDirection::kDeviceToHost, 3.2e9)};
    both.push_back(runner.start_transfers({Flow{1, 5, 3.2e9}}).at(0));  // node0/gpu1 -> node1/gpu1
    const std::vector<double> t = finish_times(both);
    EXPECT_NEAR(t.at(0), 3.2e9 / 16e9, 1e-9);  // the 32 GB/s uplink split in two
    EXPECT_NEAR(t.at(1), 3.2e9 / 16e9, 1e-9);
  });
}

}  // namespace
}  // namespace trainsim::platform
