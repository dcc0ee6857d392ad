// The typed results of a run report: what make_run_report states under its keys is what run_metrics
// reads back (power and a campaign's wall time when the report has them) and what it computes from
// the run directly, and the breakdown's parts add up to the iteration; the memory verdict explains
// an overflow alike from either; the communication log reads back as CommRecords in nccl-tests'
// conventions; a report missing a field is refused.
#include "sim/report/run_report.h"

#include <filesystem>
#include <limits>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "sim/config/loader.h"
#include "sim/config/units.h"
#include "sim/engine/scenario_run.h"
#include "sim/report/comm_log.h"

namespace trainsim::report {
namespace {

config::Scenario shipped(const char* file) {
  return config::load_scenario(std::filesystem::path(TRAINSIM_SOURCE_DIR) / "scenarios" / file);
}

// The report of `scenario` run on the ideal network.
nlohmann::json ideal_report(const config::Scenario& scenario) {
  engine::RunOptions options;
  options.network = engine::NetworkModel::kIdeal;
  return to_json(
      make_run_report(scenario, *engine::run_scenario(scenario, options), {"", "ideal", false, 1}));
}

// The report's JSON states its struct: the plan, a row per pipeline stage, the communication log
// (read back as the same records) and the sections only some runs have.
TEST(RunReport, ItsJsonStatesTheStruct) {
  const config::Scenario s = shipped("03-gpt3-175b-64xa100.yaml");
  engine::RunOptions options;
  options.network = engine::NetworkModel::kIdeal;
  options.engine.iterations = 2;
  const RunReport r = make_run_report(s, *engine::run_scenario(s, options), {"", "ideal", false, 2});
  const nlohmann::json j = to_json(r);
  EXPECT_EQ(r.plan.pp, s.parallelism.pp);
  EXPECT_EQ(j.at("plan").at("pp"), r.plan.pp);
  EXPECT_FALSE(j.at("plan").contains("cp_comm"));  // no ring context parallelism
  ASSERT_EQ(r.stages.size(), static_cast<size_t>(s.parallelism.pp));
  ASSERT_EQ(j.at("stages").size(), r.stages.size());
  EXPECT_EQ(j.at("stages")[3].at("busy_until_s"), r.stages[3].busy_until_s);
  const std::vector<CommRecord> comm = comm_records(j.at("comm"));
  ASSERT_FALSE(r.comm.empty());
  ASSERT_EQ(comm.size(), r.comm.size());
  EXPECT_EQ(comm.back().busbw_bytes_per_s, r.comm.back().busbw_bytes_per_s);
  ASSERT_TRUE(r.iteration_times_s);
  EXPECT_EQ(j.at("iterations").at("times_s").size(), 2u);
  EXPECT_FALSE(j.contains("stragglers"));
  EXPECT_FALSE(j.contains("accuracy"));  // `trainsim run` adds it
  EXPECT_EQ(j.at("memory").at("gradient_dtype"), r.gradient_dtype);
}

TEST(RunMetrics, ReadBackWhatTheReportStates) {
  const nlohmann::json report = ideal_report(shipped("03-gpt3-175b-64xa100.yaml"));
  const RunMetrics m = run_metrics(report);
  EXPECT_EQ(m.gpus, 64);
  EXPECT_EQ(m.iteration_time_s, report.at("iteration_time_s").get<double>());
  EXPECT_EQ(m.tokens_per_s, report.at("tokens_per_s").get<double>());
  EXPECT_EQ(m.mfu, report.at("mfu").get<double>());
  EXPECT_EQ(m.hfu, report.at("hfu").get<double>());
  EXPECT_EQ(m.memory.peak_hbm_bytes, report.at("memory").at("peak_hbm_bytes").get<double>());
  EXPECT_EQ(m.memory.fits, report.at("memory").at("fits").get<bool>());
  EXPECT_EQ(m.memory.peak_hbm_rank, report.at("memory").at("peak_hbm_rank").get<int64_t>());
  EXPECT_EQ(m.memory.hbm_at_peak_bytes.size(), report.at("memory").at("hbm_at_peak_bytes").size());
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

// The metrics of a run without its report are those the report states, campaign and power included.
TEST(RunMetrics, OfARunAreThoseItsReportStates) {
  config::Scenario s = shipped("03-gpt3-175b-64xa100.yaml");
  s.campaign.tokens = 1e9;
  engine::RunOptions options;
  options.network = engine::NetworkModel::kIdeal;
  const std::unique_ptr<engine::ScenarioRun> run = engine::run_scenario(s, options);
  const nlohmann::json report = to_json(make_run_report(s, *run, {"", "ideal", false, 1}));
  const RunMetrics m = run_metrics(s, *run);
  ASSERT_TRUE(m.campaign_wall_time_s && m.gpu_mean_w);
  EXPECT_EQ(to_json(m), to_json(run_metrics(report)));
}

// An overflowing plan is explained alike from the run and from its report: the fullest rank, by how
// much, its largest part.
TEST(MemoryVerdict, InfeasibilityNamesTheRankAndItsLargestPart) {
  config::Scenario s = shipped("03-gpt3-175b-64xa100.yaml");
  s.cluster.hardware.gpu.hbm_capacity_bytes = 8 * config::kBytesPerGiB;
  engine::RunOptions options;
  options.network = engine::NetworkModel::kIdeal;
  const std::unique_ptr<engine::ScenarioRun> run = engine::run_scenario(s, options);
  const MemoryVerdict v = run_metrics(s, *run).memory;
  EXPECT_FALSE(v.fits);
  const std::string why = infeasibility(v);
  EXPECT_THAT(why, ::testing::ContainsRegex("^rank [0-9]+ needs .* GiB of HBM at its peak but the GPU has "
                                            "7.60 GiB usable .*; largest part: [a-z]+ "));
  EXPECT_EQ(why, infeasibility(to_json(make_run_report(s, *run, {"", "ideal", false, 1}))));
  const MemoryVerdict estimate = memory_verdict(s, v.peak_hbm_bytes, 0);  // no rank, no parts
  EXPECT_THAT(infeasibility(estimate), ::testing::StartsWith("the fullest rank needs"));
  EXPECT_EQ(to_json(memory_verdict_from_json(to_json(v))), to_json(v));
}

TEST(RunMetrics, ACampaignsWallTimeInfiniteWhenItNeverCompletes) {
  config::Scenario s = shipped("01-gpt3-1.3b-dp8.yaml");
  s.campaign.tokens = 1e9;
  nlohmann::json report = ideal_report(s);
  const double wall_s = report.at("campaign").at("wall_time_s").get<double>();
  EXPECT_GT(wall_s, 0);
  EXPECT_EQ(run_metrics(report).campaign_wall_time_s, wall_s);
  EXPECT_EQ(to_json(run_metrics(report)).at("campaign").at("wall_time_s"), wall_s);

  report.at("campaign").erase("wall_time_s");  // as a campaign that interruptions never let finish
  EXPECT_EQ(run_metrics(report).campaign_wall_time_s, std::numeric_limits<double>::infinity());
  EXPECT_FALSE(to_json(run_metrics(report)).at("campaign").contains("wall_time_s"));
}

TEST(CommLog, ReadBackInNcclTestsConventions) {
  const nlohmann::json report = ideal_report(shipped("03-gpt3-175b-64xa100.yaml"));
  const std::vector<CommRecord> records = comm_records(report.at("comm"));
  ASSERT_EQ(records.size(), report.at("comm").size());
  bool tp_all_reduce = false;
  bool send = false;
  for (size_t i = 0; i < records.size(); ++i) {
    const CommRecord& c = records[i];
    EXPECT_EQ(to_json(c), report.at("comm")[i]);
    ASSERT_GT(c.calls, 0);
    EXPECT_DOUBLE_EQ(c.mean_time_s, c.time_s / static_cast<double>(c.calls));
    EXPECT_DOUBLE_EQ(c.algbw_bytes_per_s, c.bytes_per_call / c.mean_time_s);
    if (c.kind == "all_reduce" && c.group == "tp") {
      tp_all_reduce = true;
      const double n = static_cast<double>(c.group_size);
      EXPECT_DOUBLE_EQ(c.busbw_bytes_per_s, c.algbw_bytes_per_s * 2 * (n - 1) / n);
    }
    if (c.kind == "send") {
      send = true;
      EXPECT_EQ(c.group_size, 2);
      EXPECT_DOUBLE_EQ(c.busbw_bytes_per_s, c.algbw_bytes_per_s);
    }
  }
  EXPECT_TRUE(tp_all_reduce);  // tp 8
  EXPECT_TRUE(send);           // pp 8

  nlohmann::json partial = report.at("comm");
  partial[0].erase("mean_time_s");
  EXPECT_THROW(comm_records(partial), nlohmann::json::exception);
}

}  // namespace
}  // namespace trainsim::report
