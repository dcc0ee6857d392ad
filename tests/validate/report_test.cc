// The validation report from known results (nothing simulated): per-case errors, per-suite
// summaries, shape checks, the gate, and the table and CSV renderings; a measurement's JSON.
#include "sim/validate/report.h"

#include <cmath>
#include <limits>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "sim/validate/metrics.h"

namespace trainsim::validate {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

Case make_case(const std::string& id, const std::string& suite, double published) {
  Case c;
  c.id = id;
  c.suite = suite;
  c.paper = "paper";
  c.where = "Table 1";
  c.confidence = Confidence::kS2;
  c.metric = Metric::kIterationTime;
  c.published = published;
  c.tolerance = {true, 0.1};
  return c;
}

CaseResult value(double simulated) {
  CaseResult r;
  r.ok = true;
  r.measurement.simulated = simulated;
  r.measurement.gpus = 8;
  r.measurement.breakdown = report::Breakdown{};
  r.measurement.breakdown->compute_s = 1.0;
  r.measurement.breakdown->exposed_comm_s = 0.5;
  r.measurement.breakdown->bubble_s = 0.25;
  r.measurement.cpu_s = 2.0;
  return r;
}

CaseResult failed(const std::string& why) {
  CaseResult r;
  r.error = why;
  return r;
}

struct Fixture {
  ValidationSet set;
  std::vector<CaseResult> results;
};

Fixture make_fixture() {
  Fixture f;
  f.set.cases = {make_case("a", "gated", 10), make_case("b", "gated", 10), make_case("c", "gated", 10),
                 make_case("d", "other", 2), make_case("e", "other", 4)};
  f.set.cases[2].calculon = 10.5;
  f.set.cases[4].confidence = Confidence::kUnconfirmed;
  Suite gated{{}, "gated", "", Gate{0.05, 0.12}, {}};
  Suite other{{}, "other", "", std::nullopt, {}};
  other.shape_checks.push_back({ShapeKind::kRising, "rises", "fig", {"d", "e"}, 0, 0, 0});
  other.shape_checks.push_back({ShapeKind::kBelow, "d below e", "fig", {"d", "e"}, 0.5, 1.0, 0});
  other.shape_checks.push_back({ShapeKind::kRatioAtLeast, "e twice d", "fig", {"e", "d"}, 0, 0, 2});
  f.set.suites = {gated, other};
  f.results = {value(10.2), value(8.5), failed("the task's process died of signal 6"), value(2.0),
               value(3.0)};
  return f;
}

// The JSON form states each case's errors, its breakdown and Calculon's number.
TEST(ValidationReport, CasesCarryErrorsAndCalculon) {
  const Fixture f = make_fixture();
  const json r = to_json(make_report(f.set, f.results, {"trainsim validate", 2, 1.5, true}));
  ASSERT_EQ(r.at("cases").size(), 5u);
  const json& a = r.at("cases")[0];
  EXPECT_EQ(a.at("id"), "a");
  EXPECT_NEAR(a.at("relative_error").get<double>(), 0.02, 1e-12);
  EXPECT_TRUE(a.at("pass").get<bool>());
  EXPECT_DOUBLE_EQ(a.at("breakdown").at("bubble_s").get<double>(), 0.25);
  const json& c = r.at("cases")[2];
  EXPECT_FALSE(c.contains("simulated"));
  EXPECT_THAT(c.at("error").get<std::string>(), HasSubstr("signal 6"));
  EXPECT_NEAR(c.at("calculon_relative_error").get<double>(), 0.05, 1e-12);
  EXPECT_DOUBLE_EQ(r.at("cpu_s").get<double>(), 8.0);
}

TEST(ValidationReport, SummaryPerSuiteOverScoredCases) {
  const Fixture f = make_fixture();
  const ValidationReport r = make_report(f.set, f.results, {"trainsim validate", 2, 1.5, true});
  ASSERT_EQ(r.suites.size(), 2u);
  const SuiteSummary& gated = r.suites[0];
  EXPECT_EQ(gated.name, "gated");
  EXPECT_EQ(gated.cases, 3u);
  EXPECT_EQ(gated.passed, 1u);
  EXPECT_EQ(gated.failed, 1u);
  EXPECT_EQ(gated.errors, 1u);
  EXPECT_NEAR(gated.validation.median_abs_error, 0.085, 1e-12);  // of 0.02 and 0.15
  EXPECT_NEAR(gated.validation.max_abs_error, 0.15, 1e-12);
  ASSERT_TRUE(gated.calculon);
  EXPECT_NEAR(gated.calculon->median_abs_error, 0.05, 1e-12);
  const SuiteSummary& other = r.suites[1];
  EXPECT_EQ(other.scored, 1u);  // e is unconfirmed
  EXPECT_NEAR(other.validation.median_abs_error, 0.0, 1e-12);
  EXPECT_FALSE(other.calculon);
  // In JSON: by suite name, a statistic over no case is null.
  const json summary = to_json(r).at("summary");
  EXPECT_EQ(summary.at("gated").at("scored"), 3);
  EXPECT_TRUE(summary.at("other").at("calibration").at("median_abs_error").is_null());
}

TEST(ValidationReport, GateViolationsAreNamed) {
  const Fixture f = make_fixture();
  const ValidationReport r = make_report(f.set, f.results, {"trainsim validate", 2, 1.5, true});
  EXPECT_TRUE(r.gate.applied);
  EXPECT_FALSE(r.gate.pass());
  ASSERT_EQ(r.gate.thresholds.size(), 1u);
  EXPECT_EQ(r.gate.thresholds[0].first, "gated");
  const std::vector<std::string>& violations = r.gate.violations;
  ASSERT_EQ(violations.size(), 3u);
  EXPECT_EQ(violations[0], "gated: median |error| 8.50% exceeds 5.00%");
  EXPECT_EQ(violations[1], "gated: case b: |error| 15.00% exceeds the 12.00% allowed for every case");
  EXPECT_THAT(violations[2], HasSubstr("case c has no simulated value"));
}

TEST(ValidationReport, ShapeChecksOnSimulatedAndPublishedValues) {
  const Fixture f = make_fixture();
  const std::vector<ShapeOutcome> checks =
      make_report(f.set, f.results, {"trainsim validate", 2, 1.5, false}).shape_checks;
  ASSERT_EQ(checks.size(), 3u);
  EXPECT_TRUE(checks[0].simulated.pass);   // 2 < 3
  EXPECT_TRUE(checks[0].published.pass);   // 2 < 4
  EXPECT_TRUE(checks[1].simulated.pass);   // gap 1.0
  EXPECT_FALSE(checks[1].published.pass);  // gap 2.0 > 1.0
  EXPECT_FALSE(checks[2].simulated.pass);  // 3 / 2 < 2
  EXPECT_TRUE(checks[2].published.pass);   // 4 / 2
}

TEST(ValidationReport, TableAndCsvShowEveryCase) {
  const Fixture f = make_fixture();
  const ValidationReport r = make_report(f.set, f.results, {"trainsim validate", 2, 1.5, true});
  const std::string table = render_table(r);
  EXPECT_THAT(table, HasSubstr("# suite gated"));
  EXPECT_THAT(table, HasSubstr("error: the task's process died of signal 6"));
  EXPECT_THAT(table, HasSubstr("gated: median |error| 8.50% exceeds 5.00%"));
  EXPECT_THAT(table, HasSubstr("FAIL other: e twice d"));
  const std::string csv = render_csv(r);
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 6);
  EXPECT_THAT(
      csv,
      HasSubstr(
          "a,gated,validation,,8,iteration_time_s,equal,S2,10,10.2,0.02,true,10.2,0.02,,,1,0.5,0.25,0,\n"));
}

// Calibration cases are reported with their residual but leave the suite's statistics and gate; the
// hardware-only column is the same case on the profile beneath its stack.
TEST(ValidationReport, StatisticsAndTheGateCountValidationCasesOnly) {
  Fixture f = make_fixture();
  f.results[1].measurement.role = Role::kCalibration;  // b: -15 %, the case that broke the gate
  f.results[0].measurement.stack = true;
  f.results[0].hardware_only = Measurement{};
  f.results[0].hardware_only->simulated = 8.0;
  f.results[0].measurement.gpus = 64;
  const ValidationReport r = make_report(f.set, f.results, {"trainsim validate", 2, 1.5, true});
  const SuiteSummary& s = r.suites[0];
  EXPECT_EQ(s.scored, 2u);  // a and c (which failed)
  EXPECT_NEAR(s.validation.max_abs_error, 0.02, 1e-12);
  EXPECT_EQ(s.calibration.cases, 1u);
  EXPECT_NEAR(s.calibration.max_abs_error, 0.15, 1e-12);
  EXPECT_NEAR(s.hardware_only.median_abs_error, 0.2, 1e-12);
  EXPECT_EQ(r.cases[1].role, Role::kCalibration);
  EXPECT_EQ(r.cases[0].hardware_only, 8.0);
  EXPECT_NEAR(to_json(r).at("cases")[0].at("hardware_only").at("relative_error").get<double>(), -0.2, 1e-12);
  for (const std::string& v : r.gate.violations) EXPECT_THAT(v, ::testing::Not(HasSubstr("case b")));
  ASSERT_EQ(r.by_gpus.size(), 2u);
  EXPECT_EQ(r.by_gpus[1].gpus, "9-64");
  EXPECT_THAT(render_table(r), HasSubstr("calib"));
}

// A measurement crosses from the child that measured it as JSON: every field comes back, a missing
// value (NaN, written as null) included, and a field it always writes cannot go missing.
TEST(ValidationMeasurement, ReadsBackWhatItWrites) {
  Measurement m = value(10.2).measurement;
  m.role = Role::kCalibration;
  m.profile = "stack-a";
  m.stack = true;
  m.framework = "megatron-lm";
  m.gpu = "GPU-A";
  m.iteration_time_s = 10.2;
  m.fits = false;
  m.infeasible = "rank 0 needs more HBM";
  m.layers_measured = 12;
  m.wall_s = 1.5;
  const json j = json::parse(to_json(m).dump());
  EXPECT_EQ(to_json(measurement_from_json(j)), j);
  EXPECT_EQ(measurement_from_json(j).role, Role::kCalibration);
  EXPECT_EQ(measurement_from_json(j).breakdown->bubble_s, 0.25);
  EXPECT_FALSE(measurement_from_json(j).volume_bytes);

  m.simulated = std::numeric_limits<double>::quiet_NaN();
  EXPECT_TRUE(std::isnan(measurement_from_json(json::parse(to_json(m).dump())).simulated));
  json partial = j;
  partial.erase("gpus");
  EXPECT_THROW(measurement_from_json(partial), json::exception);
}

// The utilisation metrics are the run's own (run_report.h): model, hardware and executed FLOPs.
TEST(ValidationMetrics, UtilisationsAreTheRunsOwn) {
  config::Scenario s;
  s.training.dtype = config::Dtype::kBf16;
  s.cluster.hardware.gpu.peak_flops_per_s[config::Dtype::kBf16] = 100e12;
  report::RunMetrics m;
  m.gpus = 4;
  m.iteration_time_s = 2;
  m.mfu = 0.4;
  m.hfu = 0.5;
  m.executed_flops_utilization = 0.45;
  EXPECT_EQ(run_metric(Metric::kMfu, s, m), 0.4);
  EXPECT_EQ(run_metric(Metric::kHfu, s, m), 0.5);
  EXPECT_EQ(run_metric(Metric::kExecutedFlopsUtilization, s, m), 0.45);
  EXPECT_DOUBLE_EQ(run_metric(Metric::kHardwareTflopsPerGpu, s, m), 50);
}

TEST(ValidationMetrics, MegatronDeepspeedFlopsFollowTheCalculator) {
  config::Scenario s;
  s.model.layers = 2;
  s.model.hidden = 64;
  s.model.heads = 8;
  s.model.kv_heads = 2;  // GQA 4: 2 // 4 = 0 drops the K/V projections
  s.model.ffn_hidden = 256;
  s.model.vocab = 1000;
  s.model.seq_len = 128;
  s.model.activation = config::Activation::kSwiglu;
  s.training.global_batch = 3;
  s.parallelism.recompute = config::Recompute::kNone;
  const double b = 3, l = 2, h = 64, sq = 128;
  const double forward =
      b * l * 2 * h * h * sq + b * l * 2 * 8 * 8 * sq * sq + b * l * 3 * 256 * h * sq + b * 1000 * h * sq;
  EXPECT_DOUBLE_EQ(megatron_deepspeed_flops(s), 2 * 3 * forward);
  s.parallelism.recompute = config::Recompute::kFull;
  EXPECT_DOUBLE_EQ(megatron_deepspeed_flops(s), 2 * 4 * forward);
  s.parallelism.recompute = config::Recompute::kSelective;
  EXPECT_DOUBLE_EQ(megatron_deepspeed_flops(s), 2 * (3 * forward + b * l * 2 * 8 * 8 * sq * sq));
}

}  // namespace
}  // namespace trainsim::validate
