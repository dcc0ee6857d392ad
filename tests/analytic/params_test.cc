// Parameter counts against Narayanan et al. 2021 Table 1 (ground-truth.md B.1) and public configs.
#include "sim/analytic/params.h"

#include <cmath>

#include <gtest/gtest.h>

#include "sim/config/presets.h"

namespace trainsim::analytic {
namespace {

TEST(ParameterCount, ReproducesNarayananTable1) {
  struct Row {
    const char* preset;
    double billions;  // as printed in Table 1
  };
  const Row rows[] = {{"megatron-1.7b", 1.7},     {"megatron-3.6b", 3.6},     {"megatron-7.5b", 7.5},
                      {"megatron-18.4b", 18.4},   {"megatron-39.1b", 39.1},   {"megatron-76.1b", 76.1},
                      {"megatron-145.6b", 145.6}, {"megatron-310.1b", 310.1}, {"megatron-530b", 529.6},
                      {"megatron-1t", 1008.0}};
  for (const Row& row : rows) {
    const config::Model& m = config::find_model_preset(row.preset)->model;
    const ParameterCount p = parameter_count(m);
    // Table 1 prints one decimal.
    EXPECT_EQ(std::round(static_cast<double>(p.total) / 1e8) / 10, row.billions) << row.preset;
    // The closed form of A.7 is the same count without the final LayerNorm.
    EXPECT_DOUBLE_EQ(narayanan_parameters(m), static_cast<double>(p.total - 2 * m.hidden)) << row.preset;
  }
}

TEST(ParameterCount, LlamaModelsMatchTheirReleasedSizes) {
  // Parameter counts of the released checkpoints (config.json / model cards).
  EXPECT_EQ(parameter_count(config::find_model_preset("llama3-8b")->model).total, 8030261248);
  EXPECT_EQ(parameter_count(config::find_model_preset("llama2-7b")->model).total, 6738415616);
  EXPECT_EQ(parameter_count(config::find_model_preset("llama3-70b")->model).total, 70553706496);
}

TEST(ParameterCount, MixturesOfExpertsMatchTheirPublishedTotalAndActiveSizes) {
  // (total, active) as the model cards give them, in billions to one decimal (rounded or cut).
  const std::pair<const char*, std::pair<double, double>> published[] = {{"mixtral-8x7b", {46.7, 12.9}},
                                                                         {"mixtral-8x22b", {140.6, 39.2}},
                                                                         {"qwen3-30b-a3b", {30.5, 3.3}},
                                                                         {"deepseek-moe-16b", {16.4, 2.8}}};
  for (const auto& [name, sizes] : published) {
    const ParameterCount p = parameter_count(config::find_model_preset(name)->model);
    EXPECT_NEAR(static_cast<double>(p.total) / 1e9, sizes.first, 0.1) << name;
    EXPECT_NEAR(static_cast<double>(p.active) / 1e9, sizes.second, 0.1) << name;
  }
  // Qwen3-235B-A22B's card rounds to whole billions: 235B total, 22B activated.
  const ParameterCount qwen = parameter_count(config::find_model_preset("qwen3-235b-a22b")->model);
  EXPECT_NEAR(static_cast<double>(qwen.total) / 1e9, 235, 0.5);
  EXPECT_NEAR(static_cast<double>(qwen.active) / 1e9, 22, 0.5);
  const ParameterCount deepseek = parameter_count(config::find_model_preset("deepseek-moe-16b")->model);
  EXPECT_EQ(deepseek.moe_layers, 27);  // the first layer is dense
  EXPECT_EQ(deepseek.total - deepseek.active, 27 * (64 - 6) * int64_t{3 * 2048 * 1408});
}

TEST(ParameterCount, LatentAttentionModelsMatchTheirPublishedTotalAndActiveSizes) {
  // DeepSeek-V2 Sec. 3.1 and model cards: V2-Lite 15.7B total / 2.4B active, V2 236B / 21B; DeepSeek-V3
  // Sec. 1: 671B / 37B (the multi-token prediction module's 14B aside). Printed rounded or cut.
  // V2-Lite's card counts the active parameters without the word embedding (a lookup, not a
  // matmul): 2.45B; with it, 2.66B.
  struct Published {
    const char* name;
    double total, active;
    bool active_without_embedding;
  };
  for (const Published& m :
       {Published{"deepseek-v2-lite", 15.7, 2.4, true}, Published{"deepseek-v2", 236, 21, false},
        Published{"deepseek-v3", 671, 37, false}}) {
    const ParameterCount p = parameter_count(config::find_model_preset(m.name)->model);
    const double digit = m.total < 100 ? 0.1 : 1.0;
    EXPECT_NEAR(static_cast<double>(p.total) / 1e9, m.total, digit) << m.name;
    const int64_t active = p.active - (m.active_without_embedding ? p.embedding : 0);
    EXPECT_NEAR(static_cast<double>(active) / 1e9, m.active, digit) << m.name;
  }
  // One DeepSeek-V3 attention block by hand: query down (7168 x 1536) and up (1536 x 128 heads x
  // (128 + 64)), key/value down (7168 x (512 + 64)) and up (512 x 128 x (128 + 128)), output 128 x 128
  // x 7168; its norms add the two latents' 1536 + 512 weights.
  const config::Model& v3 = config::find_model_preset("deepseek-v3")->model;
  const int64_t matmuls = int64_t{7168} * 1536 + int64_t{1536} * 128 * 192 + int64_t{7168} * 576 +
                          int64_t{512} * 128 * 256 + int64_t{128} * 128 * 7168;
  EXPECT_EQ(attention_matmul_params(v3), matmuls);
  EXPECT_EQ(parameter_count(v3).per_layer, matmuls + 2 * 7168 + 1536 + 512 + 3 * int64_t{7168} * 18432);
  // Without a query latent (V2-Lite) the queries come straight from the hidden state.
  const config::Model& lite = config::find_model_preset("deepseek-v2-lite")->model;
  EXPECT_EQ(attention_matmul_params(lite), int64_t{2048} * 16 * 192 + int64_t{2048} * 576 +
                                               int64_t{512} * 16 * 256 + int64_t{16} * 128 * 2048);
}

TEST(ParameterCount, PerLayerBreakdown) {
  const config::Model& gpt = config::find_model_preset("megatron-1.7b")->model;
  const int64_t h = gpt.hidden;
  EXPECT_EQ(parameter_count(gpt).per_layer, 12 * h * h + 13 * h);
  EXPECT_EQ(parameter_count(gpt).lm_head, 0);  // tied
  EXPECT_EQ(parameter_count(config::find_model_preset("llama3-8b")->model).lm_head, 128256 * 4096);
}

}  // namespace
}  // namespace trainsim::analytic
