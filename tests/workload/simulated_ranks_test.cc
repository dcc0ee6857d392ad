// The ranks a collapsed run simulates: the classes' representatives, or the replica through the
// slowest NICs.
#include "sim/workload/simulated_ranks.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/workload/workload_test_util.h"

namespace trainsim::workload {
namespace {

using ::testing::ElementsAre;

// GPT-3 125M as TP2 x DP4 x PP4 on 32 GPUs, 8 per node: rank = tp + 2 dp + 8 pp, so node n holds
// stage n.
config::Scenario thirty_two_gpus() {
  return testing::make_scenario("gpt3-125m", 8, 1, {.tp = 2, .pp = 4, .dp = 4});
}

TEST(SimulatedRanks, WithoutSlowNicsTheRepresentatives) {
  const config::Scenario s = thirty_two_gpus();
  EXPECT_THAT(simulated_ranks(s, make_plan(s)), ElementsAre(0, 8, 16, 24));
}

TEST(SimulatedRanks, TheReplicaThroughTheSlowestNics) {
  config::Scenario s = thirty_two_gpus();
  s.cluster.topology.node.gpus = 4;  // node n holds ranks 4n..4n+3: node 5 is stage 1, dp 2 and 3
  s.stragglers.slow_nics = {{.nodes = {3}, .bandwidth_bytes_per_s = 25e9},
                            {.nodes = {5, 6}, .bandwidth_bytes_per_s = 10e9}};
  // Node 5's first GPU is rank 20: stage 2, dp 2, tp 0.
  EXPECT_THAT(simulated_ranks(s, make_plan(s)), ElementsAre(4, 12, 20, 28));
}

TEST(SimulatedRanks, TiesGoToTheLowestNode) {
  config::Scenario s = thirty_two_gpus();
  s.cluster.topology.node.gpus = 4;
  s.stragglers.slow_nics = {{.nodes = {6}, .bandwidth_bytes_per_s = 10e9},   // rank 24: stage 3, dp 0
                            {.nodes = {3}, .bandwidth_bytes_per_s = 10e9}};  // rank 12: stage 1, dp 2
  EXPECT_THAT(simulated_ranks(s, make_plan(s)), ElementsAre(4, 12, 20, 28));
}

}  // namespace
}  // namespace trainsim::workload
