// Decoding validation cases and suites: fields, `extends` merging, the shipped set, and located errors
// for malformed cases.
#include "sim/validate/case.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "sim/config/diagnostics.h"
#include "sim/validate/case_scenario.h"
#include "tests/validate/fixtures_dir.h"

namespace trainsim::validate {
namespace {

using ::testing::HasSubstr;

using testing::kFixtures;

// Every diagnostic of loading `root`, one per line; empty when it loads.
std::string errors_of(const std::filesystem::path& root) {
  try {
    load_validation_set(root);
  } catch (const config::ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(ValidationCase, DecodesEveryField) {
  const ValidationSet set = load_validation_set(kFixtures / "gate-violated");
  ASSERT_EQ(set.cases.size(), 1u);
  const Case& c = set.cases[0];
  EXPECT_EQ(c.id, "fixture-iteration-1000s");
  EXPECT_EQ(c.suite, "fixture-gate");
  EXPECT_EQ(c.paper, "test fixture");
  EXPECT_EQ(c.confidence, Confidence::kP);
  EXPECT_EQ(c.metric, Metric::kIterationTime);
  EXPECT_EQ(c.comparison, Comparison::kEqual);
  EXPECT_DOUBLE_EQ(c.published, 1000);
  EXPECT_TRUE(c.tolerance.relative);
  EXPECT_DOUBLE_EQ(c.tolerance.value, 0.12);
  EXPECT_EQ(c.network, Network::kIdeal);
  ASSERT_EQ(c.assumptions.size(), 1u);
  EXPECT_EQ(c.assumptions[0].key, "purpose");
  EXPECT_EQ(c.scenario.file.filename(), "00-gpt3-125m-1gpu.yaml");
  EXPECT_TRUE(c.scenario.set.empty());
  ASSERT_EQ(set.suites.size(), 1u);
  ASSERT_TRUE(set.suites[0].gate.has_value());
  EXPECT_DOUBLE_EQ(set.suites[0].gate->median_abs_error, 0.05);
  EXPECT_DOUBLE_EQ(*set.suites[0].gate->max_abs_error, 0.12);
}

TEST(ValidationCase, ExtendsMergesMapsAndKeepsPathsRelativeToTheirFile) {
  const ValidationSet set = load_validation_set(kFixtures / "gate-holds");
  ASSERT_EQ(set.cases.size(), 3u);
  const Case& iteration = set.cases[0];  // sorted by id
  const Case& layer = set.cases[1];
  EXPECT_EQ(set.cases[2].metric, Metric::kTokensPerGpu);
  EXPECT_EQ(iteration.id, "fixture-iteration-holds");
  EXPECT_EQ(iteration.paper, "test fixture");  // from the base
  EXPECT_EQ(iteration.scenario.file.filename(), "00-gpt3-125m-1gpu.yaml");
  EXPECT_TRUE(std::filesystem::exists(iteration.scenario.file));
  EXPECT_EQ(layer.metric, Metric::kLayerForward);
  EXPECT_EQ(layer.comparison, Comparison::kAtMost);
  EXPECT_EQ(layer.scenario.set.size(), 1u);
  const config::Scenario s = load_case_scenario(layer.scenario);
  EXPECT_EQ(s.parallelism.recompute, config::Recompute::kFull);
}

TEST(ValidationCase, MalformedCaseGivesLocatedErrors) {
  const std::string errors = errors_of(kFixtures / "invalid");
  EXPECT_THAT(errors, HasSubstr("typo.yaml:6:15: error: validation.confidence: unknown value \"maybe\""));
  EXPECT_THAT(errors, HasSubstr("typo.yaml:7:3: error: validation.metrc: unknown key \"metrc\" (did you mean "
                                "\"metric\"?)"));
  EXPECT_THAT(errors, HasSubstr("typo.yaml:3:3: error: validation.metric: missing required key"));
  EXPECT_THAT(errors,
              HasSubstr("typo.yaml:9:25: error: validation.tolerance.relative: expected a percentage"));
  EXPECT_THAT(errors,
              HasSubstr("search-missing.yaml:3:3: error: validation: max_sequence_tokens needs search"));
  EXPECT_THAT(errors, HasSubstr("search-missing.yaml:12:29: error: scenario.set.cluster.topology: file "
                                "references cannot be set by a case"));
}

TEST(ValidationCase, SuiteAndIdErrorsAreLocated) {
  const std::string errors = errors_of(kFixtures / "suite-errors");
  EXPECT_THAT(errors, HasSubstr("duplicate case id \"fixture-one\""));
  EXPECT_THAT(errors,
              HasSubstr("suite.yaml:4:5: error: shape_checks[0].cases: no case has id \"fixture-missing\""));
}

TEST(ValidationCase, SetErrorsPointIntoTheCaseFile) {
  const ValidationSet set = load_validation_set(kFixtures / "set-error");
  ASSERT_EQ(set.cases.size(), 1u);
  try {
    load_case_scenario(set.cases[0].scenario);
    FAIL() << "the misspelt recompute value was accepted";
  } catch (const config::ConfigError& e) {
    const std::string errors = e.what();
    EXPECT_THAT(errors,
                HasSubstr("bad-value.yaml:15:18: error: parallelism.recompute: unknown value \"ful\""));
    EXPECT_THAT(errors, HasSubstr("bad-value.yaml:12:3: error: the scenario of this case"));
  }
}

TEST(ValidationCase, ShippedSetLoadsAndEveryScenarioLoads) {
  const ValidationSet set =
      load_validation_set(std::filesystem::path(TRAINSIM_SOURCE_DIR) / "scenarios/validation");
  EXPECT_GE(set.cases.size(), 80u);
  size_t table5 = 0;
  for (const Case& c : set.cases) {
    SCOPED_TRACE(c.id);
    if (c.suite == "korthikanti-table5") ++table5;
    EXPECT_FALSE(c.assumptions.empty());
    try {
      load_case_scenario(c.scenario);
      if (c.baseline) load_case_scenario(*c.baseline);
    } catch (const config::ConfigError& e) {
      ADD_FAILURE() << e.what();
    }
  }
  EXPECT_EQ(table5, 8u);
  bool gated = false;
  for (const Suite& s : set.suites) gated = gated || (s.name == "korthikanti-table5" && s.gate.has_value());
  EXPECT_TRUE(gated);
}

TEST(ValidationCase, OneCaseFileLoadsWithItsSuiteGate) {
  const std::filesystem::path validation =
      std::filesystem::path(TRAINSIM_SOURCE_DIR) / "scenarios/validation";
  const ValidationSet one = load_validation_set(validation / "korthikanti-table5/22b-sp-selective.yaml");
  ASSERT_EQ(one.cases.size(), 1u);
  ASSERT_EQ(one.suites.size(), 1u);
  EXPECT_TRUE(one.suites[0].gate.has_value());
  // A suite's shape checks name other cases; alone, a case is loaded without them.
  const ValidationSet fpdt = load_validation_set(validation / "fpdt/mfu/llama3-8b-fpdt-2m-headline.yaml");
  ASSERT_EQ(fpdt.suites.size(), 1u);
  EXPECT_TRUE(fpdt.suites[0].shape_checks.empty());
  EXPECT_EQ(fpdt.cases[0].comparison, Comparison::kAtLeast);
}

TEST(ValidationCase, MergeOverrideBuildsNestedMaps) {
  YAML::Node tree(YAML::NodeType::Map);
  merge_override(tree, config::parse_override("parallelism.tp=4"));
  merge_override(tree, config::parse_override("parallelism.recompute=full"));
  merge_override(tree, config::parse_override("model.seq_len=4Ki"));
  EXPECT_EQ(tree["parallelism"]["tp"].as<int>(), 4);
  EXPECT_EQ(tree["parallelism"]["recompute"].as<std::string>(), "full");
  EXPECT_EQ(tree["model"]["seq_len"].as<std::string>(), "4Ki");
}

}  // namespace
}  // namespace trainsim::validate
