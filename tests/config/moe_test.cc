// The model.moe section and parallelism.ep: defaults, presets, round trip and every rule's message.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "sim/config/emit.h"
#include "sim/config/loader.h"
#include "sim/config/presets.h"
#include "tests/config/config_test_util.h"

namespace trainsim::config {
namespace {

using ::testing::ElementsAre;
using trainsim::testing::errors_of;
using trainsim::testing::ScratchDir;

// A scenario on the 32-GPU test cluster.
std::string scenario(const std::string& model, const std::string& parallelism) {
  return "schema_version: 1\nname: s\nmodel: " + model +
         "\ntraining: {global_batch: 64}\nparallelism: " + parallelism +
         "\ncluster: {topology: topo.yaml, hardware: hw.yaml, gpus: 32}\n";
}

constexpr const char* kMixtral = "{preset: mixtral-8x7b}";

class MoeRules : public ::testing::Test {
 protected:
  MoeRules() { trainsim::testing::write_minimal_cluster(dir_); }
  std::vector<std::string> errors(const std::string& text) {
    dir_.write("s.yaml", text);
    return errors_of([] { load_scenario("s.yaml"); });
  }
  Scenario load(const std::string& text) {
    dir_.write("s.yaml", text);
    return load_scenario("s.yaml");
  }
  ScratchDir dir_;
};

TEST(MoePresets, PublishedShapes) {
  const Model& mixtral = find_model_preset("mixtral-8x7b")->model;
  EXPECT_EQ(mixtral.moe.experts, 8);
  EXPECT_EQ(mixtral.moe.top_k, 2);
  EXPECT_EQ(mixtral.moe.expert_ffn_hidden, 14336);
  const Model& qwen = find_model_preset("qwen3-30b-a3b")->model;
  EXPECT_EQ(qwen.moe.experts, 128);
  EXPECT_EQ(qwen.moe.top_k, 8);
  EXPECT_EQ(qwen.moe.expert_ffn_hidden, 768);
  EXPECT_EQ(qwen.heads * qwen.head_dim, 4096);  // 32 heads of 128 on a hidden size of 2048
  const Model& deepseek = find_model_preset("deepseek-moe-16b")->model;
  EXPECT_EQ(deepseek.moe.shared_experts, 2);
  EXPECT_EQ(deepseek.moe.dense_layers, 1);
  EXPECT_FALSE(deepseek.moe_layer(0));
  EXPECT_TRUE(deepseek.moe_layer(1));
  EXPECT_FALSE(find_model_preset("llama3-8b")->model.moe.enabled());
}

TEST_F(MoeRules, DefaultsAndOverrides) {
  const Scenario s = load(scenario(
      "{layers: 4, hidden: 1024, heads: 16, vocab: 1000, seq_len: 2Ki, moe: {experts: 16, top_k: 2}}",
      "{dp: 32, ep: 8}"));
  EXPECT_EQ(s.model.moe.expert_ffn_hidden, 4096);  // the dense ffn_hidden
  EXPECT_EQ(s.model.moe.shared_experts, 0);
  EXPECT_EQ(s.model.moe.capacity_factor, 1.0);
  EXPECT_EQ(s.parallelism.ep, 8);
  const Scenario o =
      load(scenario("{preset: mixtral-8x7b, moe: {capacity_factor: 1.25}}", "{dp: 32, ep: 4}"));
  EXPECT_EQ(o.model.moe.experts, 8);
  EXPECT_EQ(o.model.moe.capacity_factor, 1.25);
}

TEST_F(MoeRules, ShownYamlLoadsBackToTheSameScenario) {
  const Scenario s = load(scenario("{preset: deepseek-moe-16b, moe: {capacity_factor: 1.5}}",
                                   "{tp: 2, dp: 16, ep: 8, sequence_parallel: megatron}"));
  const std::string yaml = to_yaml(s);
  EXPECT_NE(yaml.find("shared_experts: 2"), std::string::npos);
  dir_.write("shown.yaml", yaml);
  EXPECT_EQ(to_yaml(load_scenario("shown.yaml")), yaml);
}

TEST_F(MoeRules, ModelRules) {
  EXPECT_THAT(errors(scenario("{preset: mixtral-8x7b, moe: {top_k: 9}}", "{dp: 32}")),
              ElementsAre("s.yaml:3:36: error: model.moe: moe.top_k 9 routes each token to more experts than "
                          "the 8 there are; use top_k <= 8"));
  EXPECT_THAT(errors(scenario("{preset: mixtral-8x7b, moe: {capacity_factor: 5}}", "{dp: 32}")),
              ElementsAre("s.yaml:3:36: error: model.moe: moe.capacity_factor 5 exceeds experts / top_k = 4: "
                          "the busiest expert cannot receive more than every token"));
  EXPECT_THAT(errors(scenario("{preset: mixtral-8x7b, moe: {capacity_factor: 0.5}}", "{dp: 32}")),
              ElementsAre("s.yaml:3:54: error: model.moe.capacity_factor: must be at least 1, got 0.5"));
  EXPECT_THAT(errors(scenario("{preset: mixtral-8x7b, moe: {dense_layers: 32}}", "{dp: 32}")),
              ElementsAre("s.yaml:3:36: error: model.moe: moe.dense_layers 32 leaves none of the 32 layers "
                          "with experts; use fewer, or remove the moe section for a dense model"));
  EXPECT_THAT(errors(scenario("{preset: llama3-8b, moe: {top_k: 2}}", "{dp: 32}")),
              ElementsAre("s.yaml:3:33: error: model.moe.experts: missing required key"));
  EXPECT_THAT(errors(scenario("{preset: mixtral-8x7b, moe: {expert: 4}}", "{dp: 32}")),
              ElementsAre("s.yaml:3:37: error: model.moe.expert: unknown key \"expert\" (did you mean "
                          "\"experts\"?)"));
}

TEST_F(MoeRules, ExpertParallelRules) {
  EXPECT_THAT(
      errors(scenario("{preset: llama3-8b}", "{dp: 32, ep: 4}")),
      ElementsAre("s.yaml:5:14: error: parallelism: ep 4 spreads experts, but the model has none; add "
                  "a model.moe section or set ep: 1"));
  EXPECT_THAT(
      errors(scenario(kMixtral, "{dp: 8, pp: 4, ep: 16}")),
      ElementsAre("s.yaml:5:14: error: parallelism: ep 16 must divide dp 8 (expert parallelism spreads "
                  "the experts over data-parallel ranks); choose ep among the divisors of 8"));
  EXPECT_THAT(
      errors(scenario(kMixtral, "{dp: 32, ep: 16}")),
      ElementsAre("s.yaml:5:14: error: parallelism: ep 16 must divide the 8 experts of each MoE layer"));
  EXPECT_THAT(
      errors(scenario(kMixtral, "{tp: 2, dp: 16, ep: 8}")),
      ElementsAre("s.yaml:5:14: error: parallelism: a mixture of experts with tp 2 needs "
                  "sequence_parallel: megatron (Megatron-LM requires it: the token dispatcher works on "
                  "sequence-sharded tokens)"));
  EXPECT_THAT(errors(scenario(kMixtral, "{dp: 32, ep: 8, zero_stage: 3}")),
              ElementsAre("s.yaml:5:14: error: parallelism: a mixture of experts with zero_stage 3 is not "
                          "modelled; use zero_stage 0, 1 or 2 (expert states are sharded over their "
                          "expert-data-parallel group)"));
  EXPECT_THAT(
      errors(scenario("{preset: mixtral-8x7b, seq_len: 128Ki}", "{sp: 4, dp: 8, sequence_parallel: fpdt}")),
      ElementsAre("s.yaml:5:14: error: parallelism: a mixture of experts with sequence_parallel: fpdt "
                  "is not modelled (FPDT chunks a dense MLP); use ulysses or ring"));
  EXPECT_TRUE(errors(scenario(kMixtral, "{tp: 2, dp: 16, ep: 8, sequence_parallel: megatron}")).empty());
}

}  // namespace
}  // namespace trainsim::config
