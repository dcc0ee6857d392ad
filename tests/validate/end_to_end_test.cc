// Small real cases end to end: cases measured in forked children agree with a direct simulation of
// the same scenario; the maximum-sequence search and the communication study on small models.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "sim/common/isolated.h"
#include "sim/engine/scenario_run.h"
#include "sim/validate/case_scenario.h"
#include "sim/validate/comm_study.h"
#include "sim/validate/metrics.h"
#include "sim/validate/report.h"
#include "sim/validate/runner.h"
#include "tests/validate/fixtures_dir.h"

namespace trainsim::validate {
namespace {

const std::filesystem::path kSource(TRAINSIM_SOURCE_DIR);

TEST(ValidationEndToEnd, CasesMatchADirectSimulation) {
  const ValidationSet set = load_validation_set(testing::kFixtures / "gate-holds");
  ASSERT_EQ(set.cases.size(), 3u);
  size_t progress_calls = 0;
  const std::vector<CaseResult> results =
      run_cases(set.cases, {2, 120}, [&](size_t, const CaseResult&) { ++progress_calls; });
  EXPECT_EQ(progress_calls, 3u);
  for (const CaseResult& r : results) ASSERT_TRUE(r.ok) << r.error;
  const double iteration_s = results[0].measurement.simulated;
  const double layer_s = results[1].measurement.simulated;
  EXPECT_GT(iteration_s, 0);
  EXPECT_EQ(results[0].measurement.iteration_time_s, iteration_s);
  EXPECT_GT(layer_s, 0);
  EXPECT_LT(12 * layer_s, results[1].measurement.iteration_time_s.value());  // 12 layers
  EXPECT_EQ(results[1].measurement.layers_measured, 12);
  EXPECT_LE(results[0].measurement.breakdown.value().compute_s, iteration_s);
  // Tokens per GPU: the global batch's tokens over the iteration, per GPU.
  const config::Scenario base = load_case_scenario(set.cases[2].scenario);
  EXPECT_DOUBLE_EQ(results[2].measurement.simulated,
                   static_cast<double>(base.training.global_batch * base.model.seq_len) /
                       results[2].measurement.iteration_time_s.value() /
                       static_cast<double>(base.cluster.gpus));

  // The same scenario simulated directly (in a child: one simulation per process).
  double direct_s = 0;
  run_isolated(
      1, {1, 120},
      [&](size_t) {
        const config::Scenario s = load_case_scenario(set.cases[0].scenario);
        engine::RunOptions options;
        options.network = engine::NetworkModel::kIdeal;
        return nlohmann::json(engine::run_scenario(s, options)->result.iteration_time_s);
      },
      [&](size_t, IsolatedResult r) {
        ASSERT_TRUE(r.ok) << r.error;
        direct_s = r.value.get<double>();
      });
  EXPECT_DOUBLE_EQ(direct_s, iteration_s);
}

TEST(ValidationEndToEnd, MaxSequenceSearchStopsAtTheLastFittingLength) {
  Case c;
  c.metric = Metric::kMaxSequenceTokens;
  c.scenario.file = kSource / "scenarios/00-gpt3-125m-1gpu.yaml";
  c.search = SequenceSearch{256, 1 << 22};
  const int64_t longest = max_sequence_tokens(c);
  ASSERT_GE(longest, 512);
  EXPECT_LT(longest, 1 << 22);            // 125M at micro-batch 8 does not fit 4Mi tokens on 80 GiB
  EXPECT_EQ(longest & (longest - 1), 0);  // a doubling of `from`
  c.search->to_tokens = longest / 2;
  EXPECT_EQ(max_sequence_tokens(c), longest / 2);  // every shorter length fits too
}

TEST(ValidationEndToEnd, CommStudyReproducesThePaperRatios) {
  const std::filesystem::path file = kSource / "scenarios/validation/comm/base/neox-19m.yaml";
  const CommStudy study =
      study_comm([&](const YAML::Node& extra) { return load_scenario_with(file, extra); });
  ASSERT_EQ(study.schemes.size(), 6u);
  const auto volume = [&](const std::string& scheme) {
    for (const SchemeComm& s : study.schemes) {
      if (s.scheme == scheme) {
        EXPECT_TRUE(s.error.empty()) << s.error;
        EXPECT_NEAR(s.volume_bytes, s.expected_volume_bytes, 1e-6 * s.volume_bytes) << scheme;
        return s.volume_bytes;
      }
    }
    ADD_FAILURE() << "no scheme " << scheme;
    return 0.0;
  };
  EXPECT_NEAR(volume("ZeRO-3") / volume("DP"), 1.5, 1e-9);
  EXPECT_NEAR(volume("ZeRO-1") / volume("DP"), 1.0, 1e-9);
  EXPECT_GT(volume("TP"), 0);
  EXPECT_GT(volume("PP"), 0);
  EXPECT_THAT(study.sweep_seq_lens, ::testing::ElementsAre(512, 1024, 2048, 4096, 8192));
  ASSERT_EQ(study.sweep.size(), 6u * 5u);
  const nlohmann::json j = to_json(study);
  EXPECT_DOUBLE_EQ(j.at("schemes")[3].at("published_ratio_to_dp").get<double>(), 1.5);
  EXPECT_THAT(render_table(study), ::testing::HasSubstr("# message-size histogram"));
}

}  // namespace
}  // namespace trainsim::validate

namespace trainsim::validate {
namespace {

const std::filesystem::path kLeak = testing::kFixtures / "stack-leak";

// A validation case its own stack profile was fitted on is refused; declared a calibration case, the
// same run is reported with its role (and never counted in the statistics).
TEST(ValidateEndToEnd, AValidationCaseItsStackWasFittedOnIsRefused) {
  const ValidationSet set = load_validation_set(kLeak);
  ASSERT_EQ(set.cases.size(), 2u);
  RunnerOptions options;
  options.jobs = 2;
  options.hardware_only = true;
  const std::vector<CaseResult> results = run_cases(set.cases, options);
  ASSERT_EQ(set.cases[0].id, "fixture-leak-16gpu");  // sorted by id
  EXPECT_FALSE(results[0].ok);
  EXPECT_THAT(results[0].error,
              ::testing::HasSubstr("validation case fixture-leak-16gpu is among the "
                                   "measurements stack profile fixture-leaky-stack was fitted on"));
  const CaseResult& declared = results[1];
  ASSERT_TRUE(declared.ok) << declared.error;
  EXPECT_EQ(declared.measurement.role, Role::kCalibration);
  EXPECT_EQ(declared.measurement.gpus, 16);
  EXPECT_EQ(declared.measurement.profile, "fixture-leaky-stack");
  // The hardware beneath the stack (gemm_fraction 0.8): faster.
  ASSERT_TRUE(declared.hardware_only);
  EXPECT_LT(declared.hardware_only->simulated, declared.measurement.simulated);
  const ValidationReport report = make_report(set, results, {"test", 2, 0, false});
  ASSERT_EQ(report.suites.size(), 1u);
  const SuiteSummary& s = report.suites[0];
  EXPECT_EQ(s.name, "fixture-stack-leak");
  EXPECT_EQ(s.scored, 1u);  // only the validation case, which has no value
  EXPECT_EQ(s.errors, 1u);
  EXPECT_EQ(s.calibration.cases, 1u);
}

}  // namespace
}  // namespace trainsim::validate
