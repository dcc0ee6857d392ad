// Collective schedules played on the SimGrid platform against their alpha-beta formulas. Each
// test is its own process (one SimGrid engine per process).
#include <numeric>

#include <gtest/gtest.h>
#include <simgrid/s4u/Actor.hpp>

#include "sim/cost/flow_runner.h"
#include "sim/platform/simgrid_platform.h"
#include "tests/platform/platform_test_util.h"

namespace trainsim::cost {
namespace {

using trainsim::testing::load_fixture;

constexpr double kGiB = 1024.0 * 1024 * 1024;

class CollectiveSimTest : public ::testing::Test {
 protected:
  void build(const std::string& fixture) {
    graph_ = std::make_unique<platform::TopologyGraph>(load_fixture(fixture));
    model_ = CollectiveModel{view_of(*graph_), {}};
    engine_ = platform::create_engine();
    platform_ = std::make_unique<platform::Platform>(*engine_, *graph_);
  }
  std::vector<int> gpus(int count) const {
    std::vector<int> v(static_cast<size_t>(count));
    std::iota(v.begin(), v.end(), 0);
    return v;
  }
  std::vector<double> simulate(const std::vector<CollectiveSchedule>& schedules) {
    return run_sequentially(*engine_, *platform_, schedules);
  }

  std::unique_ptr<platform::TopologyGraph> graph_;
  CollectiveModel model_;
  std::unique_ptr<simgrid::s4u::Engine> engine_;
  std::unique_ptr<platform::Platform> platform_;
};

TEST_F(CollectiveSimTest, RingAllReduceOnOneNodeMatchesAlphaBeta) {
  build("tests/collective/fixtures/node8.yaml");
  const CollectiveSchedule ring = plan_collective(CollectiveKind::kAllReduce, gpus(8), kGiB, model_);
  EXPECT_EQ(ring.algorithm, Algorithm::kRing);
  const double alpha = 1e-6;
  const double beta = 1 / 450e9;
  const double expected = 2 * 7 * alpha + 2.0 * 7 / 8 * kGiB * beta;
  EXPECT_NEAR(simulate({ring}).at(0), expected, 0.01 * expected);
}

TEST_F(CollectiveSimTest, NvlsAndPairwiseOnOneNodeMatchTheirFormulas) {
  build("tests/collective/fixtures/node8-nvls.yaml");
  const CollectiveSchedule nvls = plan_collective(CollectiveKind::kAllReduce, gpus(8), kGiB, model_);
  EXPECT_EQ(nvls.algorithm, Algorithm::kNvls);
  const CollectiveSchedule a2a = plan_collective(CollectiveKind::kAllToAll, gpus(8), kGiB, model_);
  EXPECT_EQ(a2a.phases.at(0).flows.size(), 8u);  // one per GPU behind the NVSwitch, not 56 pairs
  const std::vector<double> t = simulate({nvls, a2a});
  const double nvls_expected = 2 * 1e-6 + 9.0 / 8 * kGiB / 450e9;
  EXPECT_NEAR(t.at(0), nvls_expected, 0.01 * nvls_expected);
  const double a2a_expected = 7 * 1e-6 + 7.0 / 8 * kGiB / 450e9;  // each GPU sends 7 chunks of S/8
  EXPECT_NEAR(t.at(1), a2a_expected, 0.01 * a2a_expected);
}

// An all-to-all over 4 nodes of 2 GPUs on non-blocking rails: every NIC carries the 6/8 of S its GPU
// sends to the other nodes (the coarsened flows, one per GPU and destination node, load the NICs as
// the pairs would).
TEST_F(CollectiveSimTest, AllToAllAcrossNodesIsBoundByTheNics) {
  build("rail");
  const CollectiveSchedule a2a = plan_collective(CollectiveKind::kAllToAll, gpus(8), kGiB, model_);
  EXPECT_EQ(a2a.phases.at(0).flows.size(), 8u * (1 + 3));
  const double expected = a2a.phases.at(0).latency_s + 6.0 / 8 * kGiB / 25e9;
  EXPECT_NEAR(simulate({a2a}).at(0), expected, 0.01 * expected);
}

// The same on the 2:1 fat tree: the 4 GPUs under a leaf send S/2 each across its 50 GB/s uplink.
TEST_F(CollectiveSimTest, AllToAllAcrossAnOversubscribedTreeIsBoundByTheBisection) {
  build("fat-tree");
  const CollectiveSchedule a2a = plan_collective(CollectiveKind::kAllToAll, gpus(8), kGiB, model_);
  const double expected = a2a.phases.at(0).latency_s + 4 * kGiB / 2 / 50e9;
  EXPECT_NEAR(simulate({a2a}).at(0), expected, 0.01 * expected);
}

// Two channels around 4 nodes of 2 GPUs: every NIC carries one ring's 2 (N-1)/N S/2 each way.
TEST_F(CollectiveSimTest, RingAllReduceAcrossNodesIsBoundByTheNics) {
  build("fat-tree");
  const CollectiveSchedule ring =
      plan_collective(CollectiveKind::kAllReduce, gpus(8), kGiB, model_, Algorithm::kRing);
  const double expected = ring.phases.at(0).latency_s + 2.0 * 7 / 8 * kGiB / 2 / 25e9;
  EXPECT_NEAR(simulate({ring}).at(0), expected, 0.01 * expected);
}

TEST_F(CollectiveSimTest, EachCollectiveOfASequenceRunsAlone) {
  build("fat-tree");
  const CollectiveSchedule tree =
      plan_collective(CollectiveKind::kAllReduce, gpus(8), 64e6, model_, Algorithm::kTree);
  const CollectiveSchedule small = plan_collective(CollectiveKind::kAllGather, gpus(4), 1e6, model_);
  const std::vector<double> t = simulate({tree, small, tree});
  EXPECT_GT(t.at(0), 0);
  EXPECT_DOUBLE_EQ(t.at(0), t.at(2));
  EXPECT_GT(t.at(1), 0);
}

TEST_F(CollectiveSimTest, HierarchicalPhasesRunInSequence) {
  build("fat-tree");
  const CollectiveSchedule h =
      plan_collective(CollectiveKind::kAllReduce, gpus(8), kGiB, model_, Algorithm::kHierarchical);
  ASSERT_EQ(h.phases.size(), 3u);
  // NVLink ring of 2 GPUs: S/2 each way at 100 GB/s; rails of 4 nodes: 2 (3/4) S/2 each way at 25 GB/s.
  const double expected = h.phases[0].latency_s + h.phases[1].latency_s + h.phases[2].latency_s +
                          2 * (kGiB / 2 / 100e9) + 2 * 3.0 / 4 * kGiB / 2 / 25e9;
  EXPECT_NEAR(simulate({h}).at(0), expected, 0.01 * expected);
}

// One caller playing a whole schedule gets the time of the members playing it themselves, whether
// it issues the flows itself or through helper actors.
TEST_F(CollectiveSimTest, OneCallerPlaysAScheduleLikeItsMembers) {
  build("torus");
  const CollectiveSchedule a2a = plan_collective(CollectiveKind::kAllToAll, gpus(16), 64e6, model_);
  const CollectiveSchedule hier =
      plan_collective(CollectiveKind::kAllReduce, gpus(16), 64e6, model_, Algorithm::kHierarchical);
  std::vector<double> by_caller;
  simgrid::s4u::Actor::create("caller", platform_->gpu_host(0), [&] {
    for (const size_t limit : {size_t{0}, FlowRunner::kDirectFlowLimit}) {
      const FlowRunner runner(*platform_, limit);
      for (const CollectiveSchedule* s : {&a2a, &hier}) {
        const double start = simgrid::s4u::Engine::get_clock();
        runner.run(*s, 7);
        by_caller.push_back(simgrid::s4u::Engine::get_clock() - start);
      }
    }
  });
  engine_->run();
  ASSERT_EQ(by_caller.size(), 4u);
  EXPECT_GT(by_caller[0], 0);
  EXPECT_DOUBLE_EQ(by_caller[0], by_caller[2]);  // member side and direct transfers agree
  EXPECT_DOUBLE_EQ(by_caller[1], by_caller[3]);
}

}  // namespace
}  // namespace trainsim::cost
