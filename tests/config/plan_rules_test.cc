// The table of plan rules: each rule once, named by a stable id and the keys it blames; violations
// read from scenarios built in code (the decoder's messages and positions are in scenario_test.cc).
#include "sim/config/plan_rules.h"

#include <set>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "sim/config/presets.h"

namespace trainsim::config {
namespace {

using ::testing::ElementsAre;
using ::testing::Field;
using ::testing::IsEmpty;

// Llama 3 8B on 8 GPUs of one node, data parallel: breaks no rule.
Scenario llama_on_eight() {
  Scenario s;
  s.model = find_model_preset("llama3-8b")->model;
  s.training.global_batch = 64;
  s.parallelism.dp = 8;
  s.cluster.gpus = 8;
  s.cluster.topology.node.gpus = 8;
  s.cluster.topology.fabric.nodes = 1;
  s.cluster.hardware.gpu.peak_flops_per_s[Dtype::kBf16] = 1e15;
  return s;
}

std::vector<std::string_view> ids(const std::vector<PlanViolation>& violations) {
  std::vector<std::string_view> out;
  for (const PlanViolation& v : violations) out.push_back(v.rule);
  return out;
}

TEST(PlanRules, IdsAreUniqueAndKeysNameScenarioSections) {
  const std::set<std::string_view> sections = {"model",   "training",  "parallelism",
                                               "cluster", "framework", "stragglers"};
  std::set<std::string_view> seen;
  for (const PlanRule& rule : plan_rules()) {
    SCOPED_TRACE(rule.id);
    EXPECT_TRUE(seen.insert(rule.id).second) << "duplicate id";
    ASSERT_FALSE(rule.keys.empty());
    for (const std::string_view key : rule.keys) {
      EXPECT_TRUE(sections.count(key.substr(0, key.find('.')))) << key;
    }
    EXPECT_NE(rule.reads & kEverySection, 0u);
    EXPECT_NE(rule.check, nullptr);
  }
}

// A scenario built in code with a degree of 0 is refused before any rule divides by it.
TEST(PlanRules, DegreesBelowOneStopTheCheck) {
  Scenario s = llama_on_eight();
  s.parallelism.tp = 0;
  EXPECT_THAT(ids(plan_violations(s)), ElementsAre("degrees-at-least-one"));
}

TEST(PlanRules, AValidPlanBreaksNone) { EXPECT_THAT(plan_violations(llama_on_eight()), IsEmpty()); }

TEST(PlanRules, EachBrokenRuleIsNamedWithItsKey) {
  Scenario s = llama_on_eight();
  s.parallelism.tp = 3;  // 32 heads, 8 K/V heads, 14336 FFN columns; 3 x 8 = 24 GPUs
  const std::vector<PlanViolation> broken = plan_violations(s);
  EXPECT_THAT(ids(broken), ElementsAre("tp-divides-heads", "tp-divides-ffn", "degrees-multiply-to-gpus"));
  EXPECT_EQ(broken[0].key, "parallelism.tp");
  EXPECT_EQ(broken[0].message, "tp 3 must divide the 32 attention heads; choose tp among the divisors of 32");
  EXPECT_EQ(broken[2].key, "parallelism.dp");
  ASSERT_TRUE(first_plan_violation(s));
  EXPECT_EQ(first_plan_violation(s)->rule, "tp-divides-heads");
}

// The decoder checks only the rules whose sections decoded cleanly; the workload leaves out the
// topology and hardware files.
TEST(PlanRules, OnlyRulesOfTheDecodedSectionsAreChecked) {
  Scenario s = llama_on_eight();
  s.cluster.gpus = 16;  // more than the topology's 8
  s.parallelism.dp = 16;
  s.cluster.hardware.gpu.peak_flops_per_s.clear();
  EXPECT_THAT(ids(plan_violations(s)), ElementsAre("gpus-fit-topology", "dtype-on-hardware"));
  EXPECT_THAT(plan_violations(s, kEverySection & ~kClusterFiles), IsEmpty());
  s.parallelism.tp = 3;
  EXPECT_THAT(plan_violations(s, kClusterGpus | kClusterFiles),
              ElementsAre(Field(&PlanViolation::rule, "gpus-fit-topology")));
}

// Expert groups take the folded tensor-parallel ranks (tp / expert_tp) first, then data-parallel ones.
TEST(PlanRules, ExpertGroupsNestInTheFoldAndTheDataParallelRanks) {
  Scenario s = llama_on_eight();
  s.model = find_model_preset("mixtral-8x7b")->model;  // 8 experts
  const auto broken = [&](int64_t tp, int64_t expert_tp, int64_t ep) {
    s.parallelism.tp = tp;
    s.parallelism.dp = 8 / tp;
    s.parallelism.expert_tp = expert_tp;
    s.parallelism.ep = ep;
    s.parallelism.sequence_parallel = tp > 1 ? SequenceParallel::kMegatron : SequenceParallel::kNone;
    return ids(plan_violations(s));
  };
  EXPECT_THAT(broken(1, 0, 8), IsEmpty());
  EXPECT_THAT(broken(4, 1, 8), IsEmpty());  // fold 4, then 2 data-parallel ranks
  EXPECT_THAT(broken(1, 0, 3), ElementsAre("ep-divides-data-parallel", "ep-divides-experts"));
  EXPECT_THAT(broken(4, 1, 16), ElementsAre("ep-divides-data-parallel", "ep-divides-experts"));
  EXPECT_THAT(broken(4, 1, 6), ElementsAre("ep-nests-in-fold", "ep-divides-experts"));
  EXPECT_THAT(broken(4, 3, 2), ElementsAre("expert-tp-divides-tp", "expert-tp-divides-expert-ffn"));
}

// A search or sweep may shrink the cluster below a straggler the scenario names.
TEST(PlanRules, StragglersPointAtTheEntryOutsideTheCluster) {
  Scenario s = llama_on_eight();
  s.stragglers.slow_gpus = {{.ranks = {1, 9}, .nodes = {}, .speed = 0.5}};
  std::optional<PlanViolation> broken = first_plan_violation(s);
  ASSERT_TRUE(broken);
  EXPECT_EQ(broken->rule, "stragglers-in-cluster");
  EXPECT_EQ(broken->key, "stragglers.slow_gpus[0].ranks[1]");
  EXPECT_EQ(broken->message, "rank 9 is not in this cluster (cluster.gpus 8: ranks 0 to 7)");
  s.stragglers.slow_gpus.clear();
  s.stragglers.slow_nics = {{.nodes = {0}, .bandwidth_bytes_per_s = 1e9},
                            {.nodes = {1}, .bandwidth_bytes_per_s = 1e9}};
  broken = first_plan_violation(s);
  ASSERT_TRUE(broken);
  EXPECT_EQ(broken->key, "stragglers.slow_nics[1].nodes[0]");
}

}  // namespace
}  // namespace trainsim::config
