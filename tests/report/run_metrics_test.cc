// The typed metrics of a run report: what make_run_report states under its keys is what run_metrics
// reads back (power and a campaign's wall time when the report has them), the breakdown's parts add
// up to the iteration, and a report missing a metric is refused.
#include <filesystem>
#include <limits>

#include <gtest/gtest.h>

#include "sim/config/loader.h"
#include "sim/engine/scenario_run.h"
#include "sim/report/run_report.h"

namespace trainsim::report {
namespace {

TEST(RunMetrics, ReadBackWhatTheReportStates) {
  const config::Scenario s = config::load_scenario(std::filesystem::path(TRAINSIM_SOURCE_DIR) /
                                                   "scenarios/03-gpt3-175b-64xa100.yaml");
  engine::RunOptions options;
  options.network = engine::NetworkModel::kIdeal;
  const auto run = engine::run_scenario(s, options);
  const nlohmann::json report = make_run_report(s, *run, {"", "ideal", false, 1});
  const RunMetrics m = run_metrics(report);
  EXPECT_EQ(m.gpus, 64);
  EXPECT_EQ(m.iteration_time_s, report.at("iteration_time_s").get<double>());
  EXPECT_EQ(m.tokens_per_s, report.at("tokens_per_s").get<double>());
  EXPECT_EQ(m.mfu, report.at("mfu").get<double>());
  EXPECT_EQ(m.hfu, report.at("hfu").get<double>());
  EXPECT_EQ(m.peak_hbm_bytes, report.at("memory").at("peak_hbm_bytes").get<double>());
  EXPECT_EQ(m.fits, report.at("memory").at("fits").get<bool>());
  EXPECT_GT(m.breakdown.bubble_s, 0);  // pp 8
  EXPECT_GT(m.breakdown.outside_layers_s, 0);
  EXPECT_NEAR(m.breakdown.total_s(), m.iteration_time_s, 1e-9 * m.iteration_time_s);
  EXPECT_EQ(to_json(m.breakdown), report.at("breakdown"));

  ASSERT_TRUE(report.contains("power"));
  EXPECT_EQ(m.gpu_mean_w, report.at("power").at("gpu_mean_w").get<double>());
  EXPECT_EQ(m.energy_per_token_j, report.at("power").at("energy_per_token_j").get<double>());
  EXPECT_FALSE(m.campaign_wall_time_s);  // the scenario states no campaign

  nlohmann::json partial = report;
  partial.at("memory").erase("fits");
  EXPECT_THROW(run_metrics(partial), nlohmann::json::exception);
}

TEST(RunMetrics, ACampaignsWallTimeInfiniteWhenItNeverCompletes) {
  config::Scenario s =
      config::load_scenario(std::filesystem::path(TRAINSIM_SOURCE_DIR) / "scenarios/01-gpt3-1.3b-dp8.yaml");
  s.campaign.tokens = 1e9;
  engine::RunOptions options;
  options.network = engine::NetworkModel::kIdeal;
  const auto run = engine::run_scenario(s, options);
  nlohmann::json report = make_run_report(s, *run, {"", "ideal", false, 1});
  const double wall_s = report.at("campaign").at("wall_time_s").get<double>();
  EXPECT_GT(wall_s, 0);
  EXPECT_EQ(run_metrics(report).campaign_wall_time_s, wall_s);
  EXPECT_EQ(to_json(run_metrics(report)).at("campaign").at("wall_time_s"), wall_s);

  report.at("campaign").erase("wall_time_s");  // as a campaign that interruptions never let finish
  EXPECT_EQ(run_metrics(report).campaign_wall_time_s, std::numeric_limits<double>::infinity());
  EXPECT_FALSE(to_json(run_metrics(report)).at("campaign").contains("wall_time_s"));
}

}  // namespace
}  // namespace trainsim::report
