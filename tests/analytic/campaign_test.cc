// The training campaign in closed form: Daly's optimum interval against the values his paper prints,
// his expected wall-clock time against a Monte-Carlo simulation of checkpoint/restart, and the
// campaign of a scenario.
#include "sim/analytic/campaign.h"

#include <cmath>
#include <random>

#include <gtest/gtest.h>

#include "sim/analytic/params.h"
#include "tests/workload/workload_test_util.h"

namespace trainsim::analytic {
namespace {

constexpr double kMinute = 60;
constexpr double kHour = 3600;

// Daly 2006, Figs. 3-5: δ = 5 min gives τopt = 117 min for M = 24 h, 57 min for 6 h, 9.1 min for 15 min.
TEST(Daly, OptimumIntervalMatchesThePaper) {
  EXPECT_NEAR(optimal_checkpoint_interval_s(5 * kMinute, 24 * kHour) / kMinute, 117, 0.5);
  EXPECT_NEAR(optimal_checkpoint_interval_s(5 * kMinute, 6 * kHour) / kMinute, 57, 0.5);
  EXPECT_NEAR(optimal_checkpoint_interval_s(5 * kMinute, 15 * kMinute) / kMinute, 9.1, 0.05);
  // A checkpoint longer than twice the mean time between interruptions: checkpoint every M.
  EXPECT_EQ(optimal_checkpoint_interval_s(3 * kHour, 1 * kHour), 1 * kHour);
}

// The job of Daly's model, played out: segments of τ work + δ checkpoint, each lost to an
// exponentially distributed interruption before it completes, then R of restart (itself interruptible).
double simulated_wall_time_s(double work_s, double interval_s, double checkpoint_s, double restart_s,
                             double mtbi_s, int runs) {
  std::mt19937_64 rng(2024);
  std::exponential_distribution<double> next_interruption(1 / mtbi_s);
  const auto segments = static_cast<int64_t>(std::llround(work_s / interval_s));
  double total = 0;
  for (int run = 0; run < runs; ++run) {
    for (int64_t done = 0; done < segments;) {
      const double failure = next_interruption(rng);
      if (failure >= interval_s + checkpoint_s) {
        total += interval_s + checkpoint_s;
        ++done;
        continue;
      }
      total += failure;
      for (double f = next_interruption(rng); f < restart_s; f = next_interruption(rng)) total += f;
      total += restart_s;
    }
  }
  return total / runs;
}

TEST(Daly, ExpectedWallTimeMatchesASimulationOfCheckpointRestart) {
  struct Case {
    double interval_s, checkpoint_s, restart_s, mtbi_s;
  };
  // From rare to frequent interruptions, with short and long checkpoints and restarts.
  for (const Case& c : {Case{2 * kHour, 5 * kMinute, 10 * kMinute, 24 * kHour},
                        Case{1 * kHour, 5 * kMinute, 10 * kMinute, 6 * kHour},
                        Case{9 * kMinute, 5 * kMinute, 10 * kMinute, 15 * kMinute},
                        Case{4 * kMinute, 3, 15 * kMinute, 2.8 * kHour}}) {
    const double work_s = 500 * c.interval_s;
    const double formula = expected_wall_time_s(work_s, c.interval_s, c.checkpoint_s, c.restart_s, c.mtbi_s);
    const double simulated =
        simulated_wall_time_s(work_s, c.interval_s, c.checkpoint_s, c.restart_s, c.mtbi_s, 200);
    EXPECT_NEAR(formula / simulated, 1, 0.01) << "interval " << c.interval_s << " s, M " << c.mtbi_s << " s";
  }
}

TEST(Daly, WithoutInterruptionsOnlyTheCheckpointsCost) {
  EXPECT_DOUBLE_EQ(expected_wall_time_s(100 * kHour, 1 * kHour, 6 * kMinute, 0, 0), 110 * kHour);
  // And the formula tends to it as interruptions become rare.
  EXPECT_NEAR(expected_wall_time_s(100 * kHour, 1 * kHour, 6 * kMinute, 0, 1e9 * kHour) / kHour, 110, 1e-3);
  EXPECT_TRUE(std::isinf(expected_wall_time_s(100 * kHour, 1 * kHour, 6 * kMinute, 1000 * kHour, 1 * kHour)));
}

// Llama-3-8B on 64 GPUs (bf16, Adam): a checkpoint is its parameters at 2 + 12 bytes.
config::Scenario campaign_scenario() {
  config::Scenario s = testing::make_scenario("llama3-8b", 64, 1, {.tp = 8, .dp = 8});
  s.cluster.hardware.host_link.d2h_bandwidth_bytes_per_s = 25e9;
  s.campaign.tokens = 1e12;
  s.campaign.checkpoints = config::Checkpoints{.write_bandwidth_bytes_per_s = 10e9};
  s.campaign.interruptions = config::Interruptions{.mtbi_per_gpu_s = 1000 * 86400.0, .restart_s = 600};
  return s;
}

TEST(Campaign, IterationsCheckpointsAndInterruptions) {
  const config::Scenario s = campaign_scenario();
  const double iteration_s = 2.0;
  const CampaignEstimate e = estimate_campaign(s, iteration_s);
  const double tokens_per_iteration = 64.0 * static_cast<double>(s.model.seq_len);
  EXPECT_EQ(e.iterations, static_cast<int64_t>(std::ceil(1e12 / tokens_per_iteration)));
  EXPECT_DOUBLE_EQ(e.training_s, static_cast<double>(e.iterations) * iteration_s);
  EXPECT_DOUBLE_EQ(e.checkpoint_bytes, 14.0 * static_cast<double>(parameter_count(s.model).total));
  EXPECT_DOUBLE_EQ(e.checkpoint_write_s, e.checkpoint_bytes / 10e9);
  EXPECT_DOUBLE_EQ(e.checkpoint_pause_s, e.checkpoint_write_s);  // synchronous: training waits for storage
  EXPECT_DOUBLE_EQ(e.job_mtbi_s, 1000 * 86400.0 / 64);
  // The interval is Daly's optimum rounded to whole iterations.
  const double optimum = optimal_checkpoint_interval_s(e.checkpoint_pause_s, e.job_mtbi_s);
  EXPECT_EQ(e.checkpoint_every_iterations, std::llround(optimum / iteration_s));
  EXPECT_DOUBLE_EQ(e.checkpoint_interval_s, static_cast<double>(e.checkpoint_every_iterations) * iteration_s);
  EXPECT_DOUBLE_EQ(e.wall_time_s, expected_wall_time_s(e.training_s, e.checkpoint_interval_s,
                                                       e.checkpoint_pause_s, 600, e.job_mtbi_s));
  EXPECT_DOUBLE_EQ(e.goodput, e.training_s / e.wall_time_s);
  EXPECT_GT(e.goodput, 0.9);
  EXPECT_LT(e.goodput, 1);
  EXPECT_DOUBLE_EQ(e.expected_interruptions, e.wall_time_s / e.job_mtbi_s);
  EXPECT_FALSE(e.cost_usd.has_value());  // the profile has no price
  EXPECT_TRUE(e.notes.empty());
}

TEST(Campaign, AsyncCheckpointsPauseOnlyForTheCopyToHost) {
  config::Scenario s = campaign_scenario();
  const CampaignEstimate sync = estimate_campaign(s, 2.0);
  s.campaign.checkpoints->async = true;
  const CampaignEstimate async = estimate_campaign(s, 2.0);
  EXPECT_DOUBLE_EQ(async.checkpoint_pause_s, async.checkpoint_bytes / 64 / 25e9);
  EXPECT_LT(async.wall_time_s, sync.wall_time_s);
  // An interval below the background write is raised to it, and says so.
  s.campaign.checkpoints->interval_s = 1;
  const CampaignEstimate raised = estimate_campaign(s, 2.0);
  EXPECT_GE(raised.checkpoint_interval_s, raised.checkpoint_write_s);
  EXPECT_LT(raised.checkpoint_interval_s, raised.checkpoint_write_s + 2.0);  // the next whole iteration
  ASSERT_EQ(raised.notes.size(), 1u);
  EXPECT_NE(raised.notes[0].find("writes do not overlap"), std::string::npos);
}

TEST(Campaign, AsyncSnapshotsNeedRoomInHostMemory) {
  config::Scenario s = campaign_scenario();
  s.campaign.checkpoints->async = true;
  const CampaignEstimate e = estimate_campaign(s, 2.0);
  EXPECT_DOUBLE_EQ(e.snapshot_host_bytes_per_node, e.checkpoint_bytes / 64 * 8);  // 8 GPUs per node
  EXPECT_TRUE(e.notes.empty());  // the test topology states no host memory
  s.cluster.topology.node.host_memory_bytes = 2 * e.snapshot_host_bytes_per_node;
  EXPECT_TRUE(estimate_campaign(s, 2.0, 0.5 * e.snapshot_host_bytes_per_node).notes.empty());
  const CampaignEstimate full = estimate_campaign(s, 2.0, 1.5 * e.snapshot_host_bytes_per_node);
  ASSERT_EQ(full.notes.size(), 1u);
  EXPECT_NE(full.notes[0].find("async checkpoints do not fit"), std::string::npos);
}

TEST(Campaign, MoreGpusAreInterruptedMoreOften) {
  config::Scenario s = campaign_scenario();
  const CampaignEstimate small = estimate_campaign(s, 2.0);
  s.cluster.gpus *= 16;
  const CampaignEstimate large = estimate_campaign(s, 2.0);
  EXPECT_DOUBLE_EQ(large.job_mtbi_s, small.job_mtbi_s / 16);
  EXPECT_LT(large.goodput, small.goodput);
}

TEST(Campaign, CostAndRunsThatNeverFinish) {
  config::Scenario s = campaign_scenario();
  s.cluster.hardware.cost.price_per_gpu_hour_usd = 2.5;
  const CampaignEstimate e = estimate_campaign(s, 2.0);
  ASSERT_TRUE(e.cost_usd.has_value());
  EXPECT_DOUBLE_EQ(*e.cost_usd, 64 * e.wall_time_s / 3600 * 2.5);
  s.campaign.interruptions->mtbi_per_gpu_s = 64;  // the job is interrupted every second
  s.campaign.interruptions->restart_s = 1000;
  const CampaignEstimate never = estimate_campaign(s, 2.0);
  EXPECT_TRUE(std::isinf(never.wall_time_s));
  EXPECT_EQ(never.goodput, 0);
  EXPECT_FALSE(never.cost_usd.has_value());
  ASSERT_EQ(never.notes.size(), 1u);
  EXPECT_NE(never.notes[0].find("would not finish"), std::string::npos);
}

TEST(Campaign, ARunShorterThanTheIntervalCheckpointsOnceAtItsEnd) {
  config::Scenario s = campaign_scenario();
  s.campaign.tokens = 1e9;  // a few thousand iterations of 2 s
  s.campaign.checkpoints->interval_s = 1e9;
  const CampaignEstimate e = estimate_campaign(s, 2.0);
  EXPECT_EQ(e.checkpoint_every_iterations, e.iterations);
  EXPECT_DOUBLE_EQ(e.checkpoint_interval_s, e.training_s);
  EXPECT_DOUBLE_EQ(e.wall_time_s,
                   expected_wall_time_s(e.training_s, e.training_s, e.checkpoint_pause_s, 600, e.job_mtbi_s));
}

TEST(Campaign, TokensAloneGiveTheTrainingTime) {
  config::Scenario s = campaign_scenario();
  s.campaign.checkpoints.reset();
  s.campaign.interruptions.reset();
  const CampaignEstimate e = estimate_campaign(s, 2.0);
  EXPECT_DOUBLE_EQ(e.wall_time_s, e.training_s);
  EXPECT_EQ(e.goodput, 1);
  EXPECT_EQ(e.checkpoint_every_iterations, 0);
}

}  // namespace
}  // namespace trainsim::analytic
