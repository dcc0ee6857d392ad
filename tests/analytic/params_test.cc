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
  const ParameterCount deepseek = parameter_count(config::find_model_preset("deepseek-moe-16b")->model);
  EXPECT_EQ(deepseek.moe_layers, 27);  // the first layer is dense
  EXPECT_EQ(deepseek.total - deepseek.active, 27 * (64 - 6) * int64_t{3 * 2048 * 1408});
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
