// The `stragglers` section of scenarios: what loads, and every error with its location and fix.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/config/config_test_util.h"

namespace trainsim::config {
namespace {

using ::testing::ElementsAre;

class StragglerRules : public trainsim::testing::ScenarioSectionTest {
 protected:
  StragglerRules() : ScenarioSectionTest("stragglers") {}
};

TEST_F(StragglerRules, SlowGpusAndSpreadLoad) {
  const Scenario s = load(
      "{slow_gpus: [{ranks: [3, 5], speed: 0.8}, {nodes: [1], speed: 0.9}], "
      "speed_spread: {stddev: 0.02, seed: 7}}");
  ASSERT_EQ(s.stragglers.slow_gpus.size(), 2u);
  EXPECT_THAT(s.stragglers.slow_gpus[0].ranks, ElementsAre(3, 5));
  EXPECT_DOUBLE_EQ(s.stragglers.slow_gpus[0].speed, 0.8);
  EXPECT_THAT(s.stragglers.slow_gpus[1].nodes, ElementsAre(1));
  EXPECT_DOUBLE_EQ(s.stragglers.spread_stddev, 0.02);
  EXPECT_EQ(s.stragglers.seed, 7u);
  EXPECT_TRUE(s.stragglers.any());
}

TEST_F(StragglerRules, AnEmptySectionSlowsNothing) {
  EXPECT_FALSE(load("{}").stragglers.any());
  EXPECT_FALSE(load("{speed_spread: {stddev: 0}}").stragglers.any());
}

TEST_F(StragglerRules, RanksAndNodesMustBeInTheCluster) {
  EXPECT_THAT(errors("{slow_gpus: [{ranks: [2, 16], speed: 0.8}]}"),
              ElementsAre("s.yaml:6:38: error: stragglers.slow_gpus[0].ranks[1]: rank 16 is not in this "
                          "cluster (cluster.gpus 16: ranks 0 to 15)"));
  EXPECT_THAT(errors("{slow_gpus: [{nodes: [2], speed: 0.8}]}"),
              ElementsAre("s.yaml:6:35: error: stragglers.slow_gpus[0].nodes[0]: node 2 is not in this "
                          "cluster (16 GPUs of 8 per node: nodes 0 to 1)"));
  EXPECT_THAT(
      errors("{slow_gpus: [{ranks: [-1], speed: 0.8}]}"),
      ElementsAre("s.yaml:6:35: error: stragglers.slow_gpus[0].ranks[0]: must be at least 0, got -1"));
}

TEST_F(StragglerRules, SpeedIsAFractionOfTheProfile) {
  for (const std::string speed : {"0", "1.2"}) {
    EXPECT_THAT(
        errors("{slow_gpus: [{ranks: [1], speed: " + speed + "}]}"),
        ElementsAre("s.yaml:6:46: error: stragglers.slow_gpus[0].speed: must be above 0 and at most 1, "
                    "got " +
                    speed +
                    ": the fraction of the profile's kernel rates the GPU reaches (0.8: its kernels "
                    "take 1.25 times as long)"));
  }
  EXPECT_THAT(errors("{slow_gpus: [{ranks: [1]}]}"),
              ElementsAre("s.yaml:6:26: error: stragglers.slow_gpus[0].speed: missing required key"));
}

TEST_F(StragglerRules, EachGpuHasOneSpeed) {
  EXPECT_THAT(errors("{slow_gpus: [{nodes: [0], speed: 0.9}, {ranks: [5], speed: 0.5}]}"),
              ElementsAre("s.yaml:6:52: error: stragglers.slow_gpus[1]: rank 5 is already slowed by "
                          "stragglers.slow_gpus[0]; give each GPU one speed"));
  EXPECT_THAT(errors("{slow_gpus: [{ranks: [], speed: 0.5}]}"),
              ElementsAre("s.yaml:6:26: error: stragglers.slow_gpus[0]: names no GPU: give a list of ranks, "
                          "of nodes, or both"));
}

TEST_F(StragglerRules, ShapesAreChecked) {
  EXPECT_THAT(errors("{slow_gpus: {ranks: [1], speed: 0.5}}"),
              ElementsAre("s.yaml:6:25: error: stragglers.slow_gpus: expected a list of entries like "
                          "{ranks: [5], speed: 0.8}"));
  EXPECT_THAT(errors("{slow_gpus: [{ranks: 1, speed: 0.5}]}"),
              ElementsAre("s.yaml:6:34: error: stragglers.slow_gpus[0].ranks: expected a list of rank "
                          "numbers, e.g. [0, 5]"));
  EXPECT_THAT(errors("{speed_spread: {stddev: 0.5}}"),
              ElementsAre("s.yaml:6:37: error: stragglers.speed_spread.stddev: must be from 0 to 0.2, got "
                          "0.5: the standard deviation of the GPUs' speeds around 1 (0.02: two thirds of the "
                          "GPUs within 2 % of the profile's rates)"));
  EXPECT_THAT(errors("{speed_spreads: {stddev: 0.01}}"),
              ElementsAre("s.yaml:6:14: error: stragglers.speed_spreads: unknown key \"speed_spreads\" (did "
                          "you mean \"speed_spread\"?)"));
}

TEST_F(StragglerRules, SlowNicsLoad) {
  const Scenario s = load("{slow_nics: [{nodes: [1], bandwidth: 100Gbps}]}");
  ASSERT_EQ(s.stragglers.slow_nics.size(), 1u);
  EXPECT_THAT(s.stragglers.slow_nics[0].nodes, ElementsAre(1));
  EXPECT_DOUBLE_EQ(s.stragglers.slow_nics[0].bandwidth_bytes_per_s, 12.5e9);
  EXPECT_TRUE(s.stragglers.any());
  EXPECT_FALSE(s.stragglers.slows_gpus());
}

TEST_F(StragglerRules, SlowNicsAreSlowerThanTheTopologysAndNamedOnce) {
  EXPECT_THAT(errors("{slow_nics: [{nodes: [1], bandwidth: 200Gbps}]}"),
              ElementsAre("s.yaml:6:50: error: stragglers.slow_nics[0].bandwidth: a slow NIC must be below "
                          "the topology's 25GB/s per NIC, got 200Gbps"));
  EXPECT_THAT(errors("{slow_nics: [{nodes: [2], bandwidth: 100Gbps}]}"),
              ElementsAre("s.yaml:6:35: error: stragglers.slow_nics[0].nodes[0]: node 2 is not in this "
                          "cluster (16 GPUs of 8 per node: nodes 0 to 1)"));
  EXPECT_THAT(errors("{slow_nics: [{nodes: [1]}]}"),
              ElementsAre("s.yaml:6:26: error: stragglers.slow_nics[0].bandwidth: missing required key"));
  EXPECT_THAT(
      errors("{slow_nics: [{nodes: [], bandwidth: 100Gbps}]}"),
      ElementsAre("s.yaml:6:26: error: stragglers.slow_nics[0]: names no node: give a list of nodes"));
  EXPECT_THAT(errors("{slow_nics: [{nodes: [1], bandwidth: 100Gbps}, {nodes: [1], bandwidth: 50Gbps}]}"),
              ElementsAre("s.yaml:6:60: error: stragglers.slow_nics[1]: node 1 is already slowed by "
                          "stragglers.slow_nics[0]; give each node one NIC bandwidth"));
  EXPECT_THAT(errors("{slow_nics: [{nodes: [1], bandwidth: 100}]}"),
              ::testing::Contains(::testing::HasSubstr("stragglers.slow_nics[0].bandwidth: ")));
}

TEST_F(StragglerRules, ShownYamlLoadsBackToTheSameScenario) {
  const Scenario s = load(
      "{slow_gpus: [{ranks: [3], nodes: [1], speed: 0.75}], slow_nics: [{nodes: [0], bandwidth: 100Gbps}], "
      "speed_spread: {stddev: 0.03, seed: 11}}");
  expect_shown_yaml_loads_back(s);
}

}  // namespace
}  // namespace trainsim::config
