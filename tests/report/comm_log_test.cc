// The communication log of a run report: what make_run_report writes under "comm" is what
// comm_records reads back, in nccl-tests' bandwidth conventions, and a record missing a field is refused.
#include "sim/report/comm_log.h"

#include <filesystem>

#include <gtest/gtest.h>

#include "sim/config/loader.h"
#include "sim/engine/scenario_run.h"
#include "sim/report/run_report.h"

namespace trainsim::report {
namespace {

TEST(CommLog, ReadBackInNcclTestsConventions) {
  const config::Scenario s = config::load_scenario(std::filesystem::path(TRAINSIM_SOURCE_DIR) /
                                                   "scenarios/03-gpt3-175b-64xa100.yaml");
  engine::RunOptions options;
  options.network = engine::NetworkModel::kIdeal;
  const auto run = engine::run_scenario(s, options);
  const nlohmann::json report = make_run_report(s, *run, {"", "ideal", false, 1});
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
