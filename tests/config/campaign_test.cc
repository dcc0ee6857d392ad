// The `campaign` section of scenarios: what loads, and every error with its location and fix.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "sim/config/emit.h"
#include "tests/config/config_test_util.h"

namespace trainsim::config {
namespace {

using ::testing::ElementsAre;

class CampaignRules : public trainsim::testing::ScenarioSectionTest {
 protected:
  CampaignRules() : ScenarioSectionTest("campaign") {}
};

TEST_F(CampaignRules, EverythingLoads) {
  const Scenario s = load(
      "{tokens: 15.6T, checkpoints: {write_bandwidth: 2TB/s, async: true, interval: 30min}, "
      "interruptions: {mtbi_per_gpu: 1898d, restart: 15min}}");
  EXPECT_DOUBLE_EQ(s.campaign.tokens, 15.6e12);
  ASSERT_TRUE(s.campaign.checkpoints.has_value());
  EXPECT_DOUBLE_EQ(s.campaign.checkpoints->write_bandwidth_bytes_per_s, 2e12);
  EXPECT_TRUE(s.campaign.checkpoints->async);
  EXPECT_DOUBLE_EQ(s.campaign.checkpoints->interval_s, 1800);
  ASSERT_TRUE(s.campaign.interruptions.has_value());
  EXPECT_DOUBLE_EQ(s.campaign.interruptions->mtbi_per_gpu_s, 1898 * 86400.0);
  EXPECT_DOUBLE_EQ(s.campaign.interruptions->restart_s, 900);
}

TEST_F(CampaignRules, TokensAloneAndTheOptimumIntervalLoad) {
  const Scenario tokens_only = load("{tokens: 300B}");
  EXPECT_DOUBLE_EQ(tokens_only.campaign.tokens, 3e11);
  EXPECT_FALSE(tokens_only.campaign.checkpoints.has_value());
  EXPECT_DOUBLE_EQ(load("{tokens: 1.5e13}").campaign.tokens, 1.5e13);
  const Scenario optimum = load(
      "{tokens: 1T, checkpoints: {write_bandwidth: 100GB/s}, interruptions: {mtbi_per_gpu: 1000d, restart: "
      "0s}}");
  EXPECT_EQ(optimum.campaign.checkpoints->interval_s, 0);  // auto
  EXPECT_FALSE(optimum.campaign.checkpoints->async);
}

TEST_F(CampaignRules, BadValuesAreLocated) {
  EXPECT_THAT(
      errors("{tokens: 15P}"),
      ElementsAre("s.yaml:6:20: error: campaign.tokens: unknown token-count suffix \"P\" in \"15P\"; use K, "
                  "M, B or T (powers of ten: 15.6T is 1.56e13 tokens)"));
  EXPECT_THAT(
      errors("{tokens: 0}"),
      ElementsAre("s.yaml:6:20: error: campaign.tokens: a token count must be positive and finite, got "
                  "\"0\""));
  EXPECT_THAT(errors("{checkpoints: {write_bandwidth: 1TB/s, interval: 1h}}"),
              ElementsAre("s.yaml:6:11: error: campaign.tokens: missing required key"));
  EXPECT_THAT(
      errors("{tokens: 1T, checkpoints: {write_bandwidth: 1TB/s, interval: 2}}"),
      ::testing::Contains(::testing::HasSubstr(
          "campaign.checkpoints.interval: expected a duration with a unit, e.g. 1.5us; \"2\" has no unit; "
          "or auto (the optimum for the interruptions)")));
  EXPECT_THAT(errors("{tokens: 1T, checkpoints: {write_bandwidth: 1TB/s, interval: 1h, every: 5}}"),
              ::testing::Contains(::testing::HasSubstr("campaign.checkpoints.every: unknown key \"every\"")));
  EXPECT_THAT(errors("{tokens: 1T, checkpoints: {interval: 1h}}"),
              ::testing::Contains(
                  ::testing::HasSubstr("campaign.checkpoints.write_bandwidth: missing required key")));
}

TEST_F(CampaignRules, InterruptionsNeedCheckpointsAndAutoNeedsInterruptions) {
  EXPECT_THAT(
      errors("{tokens: 1T, interruptions: {mtbi_per_gpu: 1000d, restart: 10min}}"),
      ElementsAre("s.yaml:6:39: error: campaign.interruptions: interruptions need checkpoints: without "
                  "them every interruption restarts the run from its first iteration; add checkpoints: "
                  "{write_bandwidth: ...}"));
  EXPECT_THAT(
      errors("{tokens: 1T, checkpoints: {write_bandwidth: 1TB/s}}"),
      ElementsAre("s.yaml:6:37: error: campaign.checkpoints: the checkpoint interval is auto, the optimum "
                  "against interruptions, but the campaign has none; add interruptions: {mtbi_per_gpu: ..., "
                  "restart: ...} or a fixed interval (e.g. interval: 1h)"));
}

TEST_F(CampaignRules, ShownYamlLoadsBackToTheSameScenario) {
  const Scenario s = load(
      "{tokens: 15.6T, checkpoints: {write_bandwidth: 2TB/s, async: true}, "
      "interruptions: {mtbi_per_gpu: 1898d, restart: 15min}}");
  expect_shown_yaml_loads_back(s);
  EXPECT_NE(to_yaml(s).find("tokens: 15.6T"), std::string::npos);
}

}  // namespace
}  // namespace trainsim::config
