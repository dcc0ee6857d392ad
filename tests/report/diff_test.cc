#include "sim/report/diff.h"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "sim/config/loader.h"
#include "tests/config/config_test_util.h"

namespace trainsim::report {
namespace {

using ::testing::ElementsAre;
using ::testing::Field;
using Json = nlohmann::json;

Json report(double iteration_s, double bubble_s, bool fits) {
  return Json{
      {"schema_version", 1},
      {"scenario", "s"},
      {"iteration_time_s", iteration_s},
      {"tokens_per_s", 1000 / iteration_s},
      {"breakdown", {{"compute_s", 1.0}, {"bubble_s", bubble_s}}},
      {"memory", {{"fits", fits}, {"peak_hbm_bytes", 1e9}}},
      {"plan", {{"tp", 8}, {"pp", 2}}},
      {"provenance",
       {{"command_line", "trainsim run s.yaml"}, {"inputs", {{"hardware", {{"name", "h100"}}}}}}},
      {"simulation", {{"ops_executed", 10}}},
      {"comm",
       {{{"kind", "all_gather"}, {"group", "tp"}, {"calls", 2}, {"total_bytes", 100.0}, {"time_s", 1.0}},
        {{"kind", "all_gather"}, {"group", "tp"}, {"calls", 3}, {"total_bytes", 50.0}, {"time_s", 2.0}}}},
      {"stages", {{{"stage", 0}, {"rank", 0}, {"bubble_s", bubble_s}}}},
      {"warnings", Json::array()}};
}

std::vector<std::string> keys(const std::vector<MetricChange>& changes) {
  std::vector<std::string> out;
  for (const MetricChange& c : changes) out.push_back(c.key);
  return out;
}

// Only what moved is listed, headline first, then the breakdown, memory, the communication log summed
// per kind and group, and the stages; bookkeeping (provenance, simulation counters) never is.
TEST(MetricChanges, ListsWhatMovedInReadingOrder) {
  Json a = report(2.0, 0.5, true);
  Json b = report(2.5, 1.0, false);
  b["simulation"]["ops_executed"] = 20;
  b["provenance"]["command_line"] = "trainsim run t.yaml";
  b["comm"][1]["time_s"] = 3.0;
  const std::vector<MetricChange> changes = metric_changes(a, b);
  EXPECT_THAT(keys(changes), ElementsAre("iteration_time_s", "tokens_per_s", "breakdown.bubble_s",
                                         "memory.fits", "comm.all_gather.tp.time_s", "stages.0.bubble_s"));
  EXPECT_DOUBLE_EQ(*changes[0].a, 2.0);
  EXPECT_DOUBLE_EQ(*changes[0].b, 2.5);
  EXPECT_EQ(changes[3].a_text, "yes");
  EXPECT_EQ(changes[3].b_text, "no");
  EXPECT_FALSE(changes[3].a.has_value());
  EXPECT_DOUBLE_EQ(*changes[4].a, 3.0);  // 1 + 2 over the two all-gather entries
  EXPECT_DOUBLE_EQ(*changes[4].b, 4.0);

  EXPECT_TRUE(metric_changes(a, a).empty());
  Json nudged = a;
  nudged["iteration_time_s"] = 2.0 * (1 + 1e-12);
  EXPECT_TRUE(metric_changes(a, nudged).empty());  // below the default relative tolerance
  EXPECT_THAT(keys(metric_changes(a, nudged, 0)), ElementsAre("iteration_time_s"));
}

TEST(MetricChanges, WarningsThatAppearOrDisappear) {
  Json a = report(2.0, 0.5, true);
  Json b = a;
  a["warnings"] = {"kept", "gone"};
  b["warnings"] = {"kept", "new"};
  const std::vector<MetricChange> changes = metric_changes(a, b);
  ASSERT_EQ(changes.size(), 2u);
  EXPECT_EQ(changes[0].a_text, "gone");
  EXPECT_EQ(changes[0].b_text, "");
  EXPECT_EQ(changes[1].b_text, "new");

  const Json diff = diff_json("A", "B", {}, changes);
  EXPECT_EQ(diff["metrics"][0]["b"], nullptr);
  EXPECT_THAT(render_diff_table(diff), ::testing::HasSubstr("# inputs: identical\n"));
}

TEST(ReportInputDifferences, ComparesPlanAndInputFilesNotCommandLines) {
  Json a = report(2.0, 0.5, true);
  Json b = a;
  b["plan"]["tp"] = 4;
  b["provenance"]["command_line"] = "other";
  b["provenance"]["inputs"]["hardware"]["name"] = "a100";
  const std::vector<InputDifference> d = report_input_differences(a, b);
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[0].key, "plan.tp");
  EXPECT_EQ(d[0].a, "8");
  EXPECT_EQ(d[0].b, "4");
  EXPECT_EQ(d[1].key, "inputs.hardware.name");
}

Json cluster_report(double shared_iteration_s, const std::vector<int>& nodes) {
  Json job = {
      {"name", "a"},
      {"scenario", "s.yaml"},
      {"gpus", 16},
      {"nodes", nodes},
      {"start_s", 0.0},
      {"slowdown", shared_iteration_s / 2.0},
      {"fits", true},
      {"shared", {{"iterations", 1}, {"min_iteration_s", shared_iteration_s}}},
      {"slowed_collectives",
       {{{"kind", "all_to_all"}, {"group", "ep"}, {"bytes_per_call", 1024.0}, {"added_time_s", 0.1}}}},
      {"alone_report", report(2.0, 0.5, true)},
      {"shared_report", report(shared_iteration_s, 0.5, true)}};
  return Json{{"schema_version", 1},   {"cluster", "c"},
              {"placement", "spread"}, {"window_s", shared_iteration_s},
              {"jobs", {job}},         {"warnings", Json::array()}};
}

// Two cluster reports compare job by job: where each job ran is an input, its slowdown, slowed
// collectives and both of its runs' metrics are metrics, each under the job's name.
TEST(ClusterDifferences, JobByJobUnderTheJobsName) {
  const Json a = cluster_report(2.5, {0, 16});
  Json b = cluster_report(3.0, {0, 1});
  b["jobs"][0]["slowed_collectives"][0]["added_time_s"] = 0.2;
  b["jobs"][0]["shared_report"]["warnings"] = {"slow"};
  EXPECT_TRUE(is_cluster_report(a));
  EXPECT_FALSE(is_cluster_report(report(2.0, 0.5, true)));

  const std::vector<InputDifference> inputs = cluster_input_differences(a, b);
  ASSERT_EQ(inputs.size(), 1u);
  EXPECT_EQ(inputs[0].key, "jobs.a.nodes");
  EXPECT_EQ(inputs[0].a, "[0,16]");
  EXPECT_EQ(inputs[0].b, "[0,1]");

  EXPECT_THAT(keys(cluster_metric_changes(a, b)),
              ElementsAre("window_s", "jobs.a.slowdown", "jobs.a.shared.min_iteration_s",
                          "jobs.a.slowed.all_to_all.ep.1024B.added_time_s", "jobs.a.shared.iteration_time_s",
                          "jobs.a.shared.tokens_per_s", "jobs.a.shared.warnings"));
  EXPECT_TRUE(cluster_input_differences(a, a).empty());
  EXPECT_TRUE(cluster_metric_changes(a, a).empty());
}

Json validation_report(double simulated, double published) {
  const Json c = {{"id", "c1"},
                  {"suite", "s"},
                  {"file", "c1.yaml"},
                  {"metric", "iteration_time_s"},
                  {"published", published},
                  {"simulated", simulated},
                  {"relative_error", (simulated - published) / published},
                  {"pass", std::abs(simulated - published) < 0.1 * published},
                  {"breakdown", {{"compute_s", simulated}}},
                  {"cpu_s", simulated * 3},
                  {"source", {{"where", "Table 1"}}}};
  return Json{{"schema_version", 1},
              {"cases", {c}},
              {"summary", {{"s", {{"median_abs_error", std::abs(simulated - published) / published}}}}},
              {"by_gpus", Json::array()},
              {"accuracy",
               {{{"framework", "f"},
                 {"gpu", "g"},
                 {"gpus", "9-64"},
                 {"role", "validation"},
                 {"cases", 1},
                 {"median_abs_error", std::abs(simulated - published) / published},
                 {"max_abs_error", std::abs(simulated - published) / published},
                 {"simulated_faster", 0},
                 {"suites", {"s"}}}}},
              {"shape_checks", Json::array()},
              {"gate", {{"pass", true}, {"thresholds", Json::object()}}}};
}

// Two validation reports compare case by case: a published value is an input, the simulated value,
// its error, whether it passes and the suite's statistics are metrics; CPU time is not.
TEST(ValidationDifferences, CaseByCase) {
  const Json a = validation_report(2.0, 2.0);
  const Json b = validation_report(2.5, 2.1);
  EXPECT_TRUE(is_validation_report(a));
  EXPECT_FALSE(is_validation_report(report(2.0, 0.5, true)));
  const std::vector<InputDifference> inputs = validation_input_differences(a, b);
  ASSERT_EQ(inputs.size(), 1u);
  EXPECT_EQ(inputs[0].key, "cases.c1.published");
  EXPECT_THAT(keys(validation_metric_changes(a, b)),
              ElementsAre("cases.c1.breakdown.compute_s", "cases.c1.pass", "cases.c1.relative_error",
                          "cases.c1.simulated", "summary.s.median_abs_error",
                          "accuracy.f.g.9-64.validation.median_abs_error",
                          "accuracy.f.g.9-64.validation.max_abs_error"));
  EXPECT_TRUE(validation_metric_changes(a, a).empty());
}

// One point of a sweep's results: its axis values, status and run report.
Json sweep_point(int64_t tp, double iteration_s, const std::string& status) {
  Json r = report(iteration_s, 0.5, status == "ok");
  r["point"] = {{"index", tp}, {"id", fmt::format("id{}", tp)}, {"values", {{"tp", tp}, {"mb", 1}}}};
  r["mode"] = "analytic";
  r["status"] = status;
  return r;
}

// Two sweeps' results compare point by point, matched by their axis values whatever their order: a
// point's status and metrics move, how it was evaluated is an input, a point only one side has is one.
TEST(SweepDifferences, PointByPointMatchedByAxisValues) {
  const Json a = {sweep_point(1, 2.0, "ok"), sweep_point(2, 3.0, "ok")};
  Json b = {sweep_point(4, 1.0, "ok"), sweep_point(2, 3.3, "infeasible"), sweep_point(1, 2.0, "ok")};
  b[2]["mode"] = "simulated";
  EXPECT_TRUE(is_sweep_results(a));
  EXPECT_FALSE(is_sweep_results(report(2.0, 0.5, true)));
  EXPECT_FALSE(is_sweep_results(Json::array({report(2.0, 0.5, true)})));

  const std::vector<InputDifference> inputs = sweep_input_differences(a, b);
  ASSERT_GE(inputs.size(), 2u);
  EXPECT_EQ(inputs[0].key, "points.mb=1,tp=1.mode");
  EXPECT_EQ(inputs[0].a, "analytic");
  EXPECT_EQ(inputs[0].b, "simulated");
  EXPECT_EQ(inputs[1].key, "points.mb=1,tp=4.mode");  // only in b
  EXPECT_EQ(inputs[1].a, "");

  const std::vector<std::string> moved = keys(sweep_metric_changes(a, b));
  EXPECT_THAT(moved,
              ::testing::IsSupersetOf({"points.mb=1,tp=2.iteration_time_s", "points.mb=1,tp=2.status",
                                       "points.mb=1,tp=2.memory.fits", "points.mb=1,tp=4.iteration_time_s"}));
  for (const std::string& key : moved) EXPECT_EQ(key.rfind("points.mb=1,tp=1.", 0), std::string::npos) << key;
  EXPECT_TRUE(sweep_input_differences(a, a).empty());
  EXPECT_TRUE(sweep_metric_changes(a, a).empty());
}

// A framework's defaults count as inputs: switching the framework shows every key it changes (the
// scenario sets dp_bucket and overlap_grad_reduce itself; its gradient dtype and attention kernel follow).
TEST(ScenarioDifferences, IncludeTheFrameworkDefaultsAndResolvedPaths) {
  const std::filesystem::path file = testing::source_dir() / "scenarios/01-gpt3-1.3b-dp8.yaml";
  const config::Scenario a = config::load_scenario(file);
  EXPECT_TRUE(scenario_differences(a, a, testing::source_dir().string()).empty());
  const config::Scenario b = config::load_scenario(file, {config::parse_override("framework=megatron-lm")});
  const std::vector<InputDifference> d = scenario_differences(a, b, testing::source_dir().string());
  EXPECT_THAT(d, ::testing::Contains(AllOf(Field(&InputDifference::key, "framework"),
                                           Field(&InputDifference::a, "generic"),
                                           Field(&InputDifference::b, "megatron-lm"))));
  EXPECT_THAT(
      d, ::testing::Contains(AllOf(Field(&InputDifference::key, "training.grad_dtype"),
                                   Field(&InputDifference::a, "bf16"), Field(&InputDifference::b, "fp32"))));
  for (const InputDifference& difference : d) {
    EXPECT_NE(difference.key, "cluster.topology");  // the same file, however the scenario names it
  }
}

}  // namespace
}  // namespace trainsim::report
