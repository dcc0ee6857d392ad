// Per-GPU kernel speeds from a scenario's stragglers: explicit slow GPUs, the seeded spread, and the
// speed a collapsed run gives each pipeline stage.
#include "sim/workload/gpu_speed.h"

#include <algorithm>
#include <cmath>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "sim/workload/errors.h"
#include "tests/workload/workload_test_util.h"

namespace trainsim::workload {
namespace {

using ::testing::ElementsAre;

// GPT-3 125M as TP2 x DP4 x PP2 on 16 GPUs, 8 per node.
config::Scenario sixteen_gpus() {
  return testing::make_scenario("gpt3-125m", 8, 1, {.tp = 2, .pp = 2, .dp = 4});
}

TEST(GpuSpeed, NoStragglersNoSpeeds) {
  const config::Scenario s = sixteen_gpus();
  const ParallelPlan plan = make_plan(s);
  EXPECT_TRUE(gpu_speeds(s, plan).empty());
  EXPECT_TRUE(simulated_speeds({}, plan, {0, 8}, false).empty());
}

TEST(GpuSpeed, SlowRanksAndNodes) {
  config::Scenario s = sixteen_gpus();
  s.stragglers.slow_gpus = {{.ranks = {3}, .nodes = {}, .speed = 0.8},
                            {.ranks = {}, .nodes = {1}, .speed = 0.5}};
  const std::vector<double> speed = gpu_speeds(s, make_plan(s));
  ASSERT_EQ(speed.size(), 16u);
  for (int64_t r = 0; r < 16; ++r) {
    const double expected = r == 3 ? 0.8 : r >= 8 ? 0.5 : 1.0;
    EXPECT_DOUBLE_EQ(speed[r], expected) << "rank " << r;
  }
}

// The draws have the requested spread, stay within three standard deviations, and depend on the seed
// and the rank alone: a GPU keeps its speed when the cluster grows, another seed gives other draws.
TEST(GpuSpeed, SpreadIsATruncatedNormalPerRank) {
  config::Scenario big = testing::make_scenario("gpt3-125m", 4096, 1, {.dp = 4096});
  big.stragglers.spread_stddev = 0.05;
  big.stragglers.seed = 3;
  const std::vector<double> speed = gpu_speeds(big, make_plan(big));
  double sum = 0, squares = 0;
  for (const double v : speed) {
    sum += v;
    squares += (v - 1) * (v - 1);
    EXPECT_LE(std::abs(v - 1), 3 * 0.05 + 1e-12);
  }
  const double n = static_cast<double>(speed.size());
  EXPECT_NEAR(sum / n, 1.0, 0.003);                  // 4 standard errors of the mean
  EXPECT_NEAR(std::sqrt(squares / n), 0.05, 0.003);  // truncation at 3 sigma shrinks it by 1.4 %
  EXPECT_LT(*std::min_element(speed.begin(), speed.end()), 0.85 + 0.02);  // the tail at scale

  config::Scenario small = big;
  small.training.global_batch = 16;
  small.parallelism.dp = 16;
  small.cluster.gpus = 16;
  const std::vector<double> first = gpu_speeds(small, make_plan(small));
  EXPECT_TRUE(std::equal(first.begin(), first.end(), speed.begin()));
  small.stragglers.seed = 4;
  const std::vector<double> reseeded = gpu_speeds(small, make_plan(small));
  EXPECT_FALSE(std::equal(first.begin(), first.end(), reseeded.begin()));
}

TEST(GpuSpeed, SlowGpusMultiplyTheirDraw) {
  config::Scenario s = sixteen_gpus();
  s.stragglers.spread_stddev = 0.02;
  const std::vector<double> drawn = gpu_speeds(s, make_plan(s));
  s.stragglers.slow_gpus = {{.ranks = {5}, .nodes = {}, .speed = 0.5}};
  const std::vector<double> slowed = gpu_speeds(s, make_plan(s));
  EXPECT_DOUBLE_EQ(slowed[5], 0.5 * drawn[5]);
  EXPECT_DOUBLE_EQ(slowed[4], drawn[4]);
}

// Collapsed, each stage's representative runs at its slowest member's speed; full, every rank at
// its own.
TEST(GpuSpeed, CollapsedStagesRunAtTheirSlowestMember) {
  config::Scenario s = sixteen_gpus();  // stage 0: ranks 0-7, stage 1: ranks 8-15
  s.stragglers.slow_gpus = {{.ranks = {13}, .nodes = {}, .speed = 0.7},
                            {.ranks = {2}, .nodes = {}, .speed = 0.9}};
  const ParallelPlan plan = make_plan(s);
  const std::vector<double> speed = gpu_speeds(s, plan);
  EXPECT_THAT(simulated_speeds(speed, plan, {0, 8}, false), ElementsAre(0.9, 0.7));
  EXPECT_THAT(simulated_speeds(speed, plan, {0, 2, 8, 13}, true), ElementsAre(1.0, 0.9, 1.0, 0.7));
}

// A search or sweep that shrinks the cluster under a scenario naming a GPU beyond it: the plan rule
// stragglers-in-cluster, pointing at the entry's node.
TEST(GpuSpeed, NamedGpuOutsideTheClusterIsAPlanError) {
  config::Scenario s = sixteen_gpus();
  s.stragglers.slow_gpus = {{.ranks = {}, .nodes = {2}, .speed = 0.7}};
  try {
    make_plan(s);
    FAIL() << "no PlanError";
  } catch (const PlanError& e) {
    EXPECT_EQ(e.rule(), "stragglers-in-cluster");
    EXPECT_EQ(e.setting(), "stragglers.slow_gpus[0].nodes[0]");
    EXPECT_EQ(e.message(), "node 2 is not in this cluster (16 GPUs of 8 per node: nodes 0 to 1)");
  }
}

}  // namespace
}  // namespace trainsim::workload
