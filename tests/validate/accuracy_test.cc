// The accuracy table from known results (nothing simulated): its rows by framework, GPU, scale and
// role; the file it is kept in, read back and checked for drift; and the evidence a run quotes.
#include "sim/validate/accuracy.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "sim/config/diagnostics.h"
#include "sim/config/loader.h"
#include "tests/config/config_test_util.h"

namespace trainsim::validate {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

Case make_case(const std::string& id, const std::string& suite, Metric metric, double published) {
  Case c;
  c.id = id;
  c.suite = suite;
  c.confidence = Confidence::kS2;
  c.metric = metric;
  c.published = published;
  return c;
}

CaseResult measured(double simulated, const std::string& framework, int64_t gpus, Role role) {
  CaseResult r;
  r.ok = true;
  r.measurement.simulated = simulated;
  r.measurement.framework = framework;
  r.measurement.gpu = "GPU-A";
  r.measurement.gpus = gpus;
  r.measurement.role = role;
  return r;
}

// Cases of two frameworks at two scales: a duration simulated shorter and a rate simulated higher
// both count as faster; an unscored case, a failed one and an untimed metric count nowhere;
// calibration cases form their own row.
TEST(AccuracyRows, GroupByFrameworkGpuScaleAndRole) {
  ValidationSet set;
  set.cases = {make_case("t1", "s1", Metric::kIterationTime, 10),
               make_case("t2", "s1", Metric::kIterationTime, 10),
               make_case("r1", "s2", Metric::kTokensPerGpu, 100),
               make_case("u", "s2", Metric::kTokensPerGpu, 100),
               make_case("m", "s2", Metric::kMaxSequenceTokens, 1e6),
               make_case("f", "s2", Metric::kMfu, 0.5),
               make_case("c", "s3", Metric::kIterationTime, 4),
               make_case("big", "s1", Metric::kMfu, 0.4)};
  set.cases[3].confidence = Confidence::kUnconfirmed;
  const std::vector<CaseResult> results = {
      measured(9, "megatron-lm", 64, Role::kValidation),   measured(12, "megatron-lm", 32, Role::kValidation),
      measured(110, "megatron-lm", 16, Role::kValidation), measured(50, "megatron-lm", 16, Role::kValidation),
      measured(2e6, "megatron-lm", 16, Role::kValidation), CaseResult{false, {}, "died", {}, {}},
      measured(3, "megatron-lm", 8, Role::kCalibration),   measured(0.44, "nemo", 1024, Role::kValidation)};
  const std::vector<AccuracyRow> rows = accuracy_rows(set, results);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].framework, "megatron-lm");
  EXPECT_EQ(rows[0].gpus, "1-8");
  EXPECT_EQ(rows[0].role, "calibration");
  EXPECT_EQ(rows[1].gpus, "9-64");
  EXPECT_EQ(rows[1].role, "validation");
  EXPECT_EQ(rows[1].cases, 3);  // t1 (-10 %), t2 (+20 %), r1 (+10 %)
  EXPECT_NEAR(rows[1].median_abs_error, 0.10, 1e-12);
  EXPECT_NEAR(rows[1].max_abs_error, 0.20, 1e-12);
  EXPECT_EQ(rows[1].simulated_faster, 2);  // t1 shorter, r1 higher; t2 longer
  EXPECT_THAT(rows[1].suites, ElementsAre("s1", "s2"));
  EXPECT_EQ(rows[2].framework, "nemo");
  EXPECT_EQ(rows[2].gpus, "513+");
  EXPECT_EQ(rows[2].simulated_faster, 1);
}

TEST(AccuracyFile, ReadsBackWhatItWrites) {
  const std::vector<AccuracyRow> rows = {
      {"megatron-lm",
       "NVIDIA A100-SXM4-80GB",
       "513+",
       "validation",
       5,
       0.0999,
       0.1216,
       5,
       {"narayanan-table1"}},
      {"nemo", "NVIDIA H100 80GB HBM3", "1-8", "calibration", 1, 0.02, 0.02, 0, {"a", "b"}}};
  const std::string text = accuracy_yaml(rows);
  EXPECT_THAT(text, HasSubstr("--write-accuracy"));  // says how it is regenerated
  const std::vector<AccuracyRow> back = parse_accuracy(text, "accuracy.yaml");
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(back[1].gpu, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(back[1].suites, (std::vector<std::string>{"a", "b"}));
  EXPECT_DOUBLE_EQ(back[0].max_abs_error, 0.1216);
  EXPECT_TRUE(accuracy_drift(rows, back, 1e-9).empty());
}

// A mistake is named by file, line and key; every one at once.
TEST(AccuracyFile, MistakesNameLineAndKey) {
  const std::string text =
      "schema_version: 1\n"
      "regimes:\n"
      "  - {framework: x, gpu: y, gpus: 10-20, role: validation, cases: 1, median_abs_error: 0.1, "
      "max_abs_error: 0.1, simulated_faster: 0, suites: [s]}\n"
      "  - {framework: x, gpu: y, gpus: 1-8, role: validation, cases: many, median_abs_error: 0.1, "
      "max_abs_eror: 0.1, max_abs_error: 0.1, suites: [s]}\n";
  try {
    parse_accuracy(text, "acc.yaml");
    FAIL() << "no error";
  } catch (const config::ConfigError& e) {
    const std::string what = e.what();
    EXPECT_THAT(what, HasSubstr("acc.yaml:3:"));
    EXPECT_THAT(what, HasSubstr("regimes[0].gpus: unknown range \"10-20\""));
    EXPECT_THAT(what, HasSubstr("acc.yaml:4:"));
    EXPECT_THAT(what,
                HasSubstr("acc.yaml:4:64: error: regimes[1].cases: expected a whole number, got \"many\""));
    EXPECT_THAT(what, HasSubstr("regimes[1].simulated_faster: missing required key"));
    EXPECT_THAT(
        what,
        HasSubstr("regimes[1].max_abs_eror: unknown key \"max_abs_eror\" (did you mean \"max_abs_error\"?)"));
  }
}

// The file's own keys follow the rules of every trainsim input: a schema version, no unknown key,
// roles and ranges from their lists.
TEST(AccuracyFile, TopLevelAndChoicesAreChecked) {
  const auto error_of = [](const std::string& text) {
    try {
      parse_accuracy(text, "acc.yaml");
    } catch (const config::ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_THAT(error_of("regimes: []\n"), HasSubstr("missing schema_version"));
  EXPECT_THAT(
      error_of("schema_version: 1\nregime: []\n"),
      AllOf(HasSubstr("acc.yaml:2:1: error: regime: unknown key \"regime\" (did you mean \"regimes\"?)"),
            HasSubstr("regimes: expected the list of regimes")));
  EXPECT_THAT(
      error_of("schema_version: 1\nregimes:\n  - {framework: x, gpu: y, gpus: 1-8, role: fitted, "
               "cases: 1, median_abs_error: 0.1, max_abs_error: 0.1, simulated_faster: 0, suites: s}\n"),
      AllOf(HasSubstr("regimes[0].role: unknown value \"fitted\""),
            HasSubstr("expected one of: calibration, validation"),
            HasSubstr("regimes[0].suites: expected a list of suite names")));
  EXPECT_THAT(
      error_of("schema_version: 1\nregimes:\n  - {framework: x, gpu: y, gpus: 1-8, role: calibration, "
               "cases: 1, median_abs_error: 0.1, max_abs_error: 0.1, simulated_faster: 0, "
               "suites: [s, {t: 1}]}\n"),
      HasSubstr("regimes[0].suites[1]: expected a string"));
}

TEST(AccuracyFile, DriftNamesEveryRegimeThatMoved) {
  const AccuracyRow base{"f", "g", "9-64", "validation", 4, 0.05, 0.10, 3, {"s"}};
  AccuracyRow moved = base;
  moved.median_abs_error = 0.07;
  AccuracyRow recounted = base;
  recounted.gpus = "65-512";
  AccuracyRow grown = recounted;
  grown.cases = 5;
  AccuracyRow fresh = base;
  fresh.gpus = "513+";
  EXPECT_TRUE(accuracy_drift({base}, {base}, 0.005).empty());
  EXPECT_TRUE(accuracy_drift({base}, {moved}, 0.03).empty());  // within the tolerance
  const std::vector<std::string> drift = accuracy_drift({base, recounted}, {moved, grown, fresh}, 0.005);
  ASSERT_EQ(drift.size(), 3u);
  EXPECT_THAT(drift[0],
              HasSubstr("f on g at 9-64 GPUs (validation): median |error| 7.0%; the file says 5.0%"));
  EXPECT_THAT(drift[1],
              HasSubstr("at 65-512 GPUs (validation): 5 cases, 3 simulated faster; the file says 4 and 3"));
  EXPECT_THAT(drift[2], HasSubstr("at 513+ GPUs (validation): validated, not in the file"));
}

// A run quotes every row of its GPU at its scale; without one, those of the nearest scale its GPU has.
TEST(AccuracyFor, TheRowsOfTheRunsGpuAtItsScaleOrTheNearest) {
  config::Scenario s =
      config::load_scenario(trainsim::testing::source_dir() / "scenarios/03-gpt3-175b-64xa100.yaml");
  const std::string gpu = s.cluster.hardware.gpu.name;
  const std::vector<AccuracyRow> rows = {
      {"megatron-lm", gpu, "9-64", "validation", 4, 0.01, 0.02, 4, {"k"}},
      {"nemo", gpu, "9-64", "validation", 2, 0.03, 0.04, 1, {"n"}},
      {"megatron-lm", gpu, "513+", "validation", 5, 0.1, 0.12, 5, {"k"}},
      {"megatron-lm", "other GPU", "65-512", "validation", 1, 0, 0, 0, {"o"}}};
  report::AccuracyEvidence a = accuracy_for(s, rows);
  EXPECT_EQ(a.gpus, "9-64");
  EXPECT_EQ(a.rows.size(), 2u);
  EXPECT_FALSE(a.nearest_gpus);
  EXPECT_FALSE(to_json(a).contains("nearest_gpus"));
  s.cluster.gpus = 256;
  a = accuracy_for(s, rows);
  EXPECT_EQ(a.gpus, "65-512");
  EXPECT_EQ(a.nearest_gpus, "9-64");  // as near as 513+: the smaller
  EXPECT_EQ(a.rows.size(), 2u);
  EXPECT_EQ(to_json(a).at("nearest_gpus"), "9-64");
  EXPECT_THAT(render_accuracy(a), HasSubstr("at 9-64 GPUs (none at this run's 65-512 GPUs)"));
  s.cluster.hardware.gpu.name = "a GPU nobody published";
  EXPECT_TRUE(accuracy_for(s, rows).rows.empty());
}

// The table built into the binary is the shipped file's, and reads.
TEST(AccuracyFor, ShippedTableReads) {
  EXPECT_FALSE(shipped_accuracy().empty());
  for (const AccuracyRow& row : shipped_accuracy()) {
    EXPECT_GT(row.cases, 0);
    EXPECT_LE(row.median_abs_error, row.max_abs_error);
  }
}

}  // namespace
}  // namespace trainsim::validate
