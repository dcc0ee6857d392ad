#include "sim/cost/compute_model.h"

#include <gtest/gtest.h>

namespace trainsim::cost {
namespace {

using config::AttentionPass;
using config::Dtype;

config::HardwareProfile profile() {
  config::HardwareProfile p;
  p.name = "test";
  p.gpu.peak_flops_per_s[Dtype::kBf16] = 100e12;
  p.gpu.hbm_bandwidth_bytes_per_s = 2e12;
  p.compute.gemm_efficiency = 0.8;
  p.compute.attention_forward_efficiency = 0.5;
  p.compute.attention_backward_efficiency = 0.4;
  p.compute.memory_efficiency = 0.5;
  p.compute.kernel_launch_s = 5e-6;
  return p;
}

TEST(ComputeModel, LargeGemmRunsAtTheAchievableFractionOfPeak) {
  const config::HardwareProfile p = profile();
  WarningLog warnings;
  const ComputeModel model(p, &warnings);
  const double flops = 2.0 * 8192 * 8192 * 8192;
  EXPECT_DOUBLE_EQ(model.gemm_s(8192, 8192, 8192, Dtype::kBf16), flops / (100e12 * 0.8));
  EXPECT_EQ(warnings.size(), 0u);
}

// Tile and wave quantization: 108 SMs, 256x128 tiles. 108 tiles fill one wave exactly; one tile
// more needs a second wave that runs with one SM busy.
TEST(ComputeModel, GemmLosesTheIdlePartOfItsLastWave) {
  config::HardwareProfile p = profile();
  p.gpu.sm_count = 108;
  WarningLog warnings;
  const ComputeModel model(p, &warnings);
  const auto efficiency = [&](int64_t m, int64_t n, int64_t k) {
    return 2.0 * static_cast<double>(m) * n * k / (model.gemm_s(m, n, k, Dtype::kBf16) * 100e12);
  };
  EXPECT_DOUBLE_EQ(efficiency(27 * 256, 4 * 128, 8192), 0.8);  // 108 tiles, one full wave
  // m = 7040: 220 tiles of 128x128 (the best of the three tile shapes) in 3 waves of 108.
  EXPECT_NEAR(efficiency(27 * 256 + 128, 4 * 128, 8192), 0.8 * (7040.0 * 512) / (3 * 108 * 128 * 128), 1e-12);
  // Few tiles and a deep k: split-K fills the GPU (2 tiles x 54 slices of k).
  EXPECT_DOUBLE_EQ(efficiency(256, 256, 65536), 0.8);
  // Without an SM count the profile's efficiency applies to every shape.
  p.gpu.sm_count = 0;
  EXPECT_DOUBLE_EQ(efficiency(27 * 256 + 128, 4 * 128, 8192), 0.8);
}

TEST(ComputeModel, SkinnyGemmIsMemoryBoundAndTinyGemmHitsTheLaunchFloor) {
  const config::HardwareProfile p = profile();
  WarningLog warnings;
  const ComputeModel model(p, &warnings);
  // m = 1: 2·k·n flops against 2·(k + k·n + n) bytes: memory-bound at 1 TB/s effective.
  const double bytes = 2.0 * (16384 + 16384.0 * 16384 + 16384);
  EXPECT_DOUBLE_EQ(model.gemm_s(1, 16384, 16384, Dtype::kBf16), bytes / 1e12);
  EXPECT_DOUBLE_EQ(model.gemm_s(8, 8, 8, Dtype::kBf16), 5e-6);
  EXPECT_DOUBLE_EQ(model.memory_s(1e9), 1e-3);
}

TEST(ComputeModel, MeasuredGemmTableWinsAndWarnsOutsideItsRange) {
  config::HardwareProfile p = profile();
  p.gemm_samples = {{Dtype::kBf16, 4096, 4096, 4096, 2e-3}, {Dtype::kBf16, 8192, 8192, 8192, 12e-3}};
  WarningLog warnings;
  const ComputeModel model(p, &warnings);
  EXPECT_DOUBLE_EQ(model.gemm_s(4096, 4096, 4096, Dtype::kBf16), 2e-3);
  EXPECT_DOUBLE_EQ(model.gemm_s(8192, 8192, 8192, Dtype::kBf16), 12e-3);
  // Half way in log space: the efficiency is the mean of the two samples' efficiencies.
  const double e1 = 2.0 * 4096 * 4096 * 4096 / (2e-3 * 100e12);
  const double e2 = 2.0 * 8192 * 8192 * 8192 / (12e-3 * 100e12);
  const double t = model.gemm_s(5793, 5793, 5793, Dtype::kBf16);
  EXPECT_NEAR(2.0 * 5793 * 5793 * 5793 / (t * 100e12), (e1 + e2) / 2, 1e-3);
  EXPECT_EQ(warnings.size(), 0u);
  model.gemm_s(16384, 16384, 16384, Dtype::kBf16);
  model.gemm_s(32768, 16384, 16384, Dtype::kBf16);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings.messages()[0],
            "gemm 16384x16384x16384 (bf16) is outside the measured GEMM range [4096, 8192] x [4096, 8192] x "
            "[4096, 8192]; using the nearest measured efficiencies (2 times)");
}

TEST(ComputeModel, AttentionFlopsAndTime) {
  AttentionCall full{AttentionPass::kForward, false, Dtype::kBf16, 1, 8, 8, 1024, 1024, 128};
  EXPECT_DOUBLE_EQ(attention_flops(full), 4.0 * 8 * 128 * 1024 * 1024);
  AttentionCall causal = full;
  causal.causal = true;
  EXPECT_DOUBLE_EQ(attention_flops(causal), 4.0 * 8 * 128 * (1024.0 * 1025 / 2));
  AttentionCall backward = full;
  backward.pass = AttentionPass::kBackward;
  EXPECT_DOUBLE_EQ(attention_flops(backward), 2.5 * attention_flops(full));
  // A rectangular causal block (q < kv) keeps the bottom-right triangle.
  AttentionCall rect = causal;
  rect.q_len = 2;
  rect.kv_len = 4;
  EXPECT_DOUBLE_EQ(attention_flops(rect), 4.0 * 8 * 128 * (3 + 4));
  const config::HardwareProfile p = profile();
  WarningLog warnings;
  const ComputeModel model(p, &warnings);
  EXPECT_DOUBLE_EQ(model.attention_s(full), attention_flops(full) / (100e12 * 0.5));
  EXPECT_DOUBLE_EQ(model.attention_s(backward), attention_flops(backward) / (100e12 * 0.4));
  // A head_dim between two compiled ones (80: GPT-3 2.7B) runs in the next one up (96).
  AttentionCall padded = full;
  padded.head_dim = 80;
  EXPECT_DOUBLE_EQ(model.attention_s(padded), attention_flops(padded) * 96 / 80 / (100e12 * 0.5));
  // MLA's heads: queries and keys of 192, values of 128 (no padding).
  AttentionCall mla = full;
  mla.head_dim = 192;
  mla.value_dim = 128;
  EXPECT_DOUBLE_EQ(attention_flops(mla), 2.0 * 8 * (192 + 128) * 1024 * 1024);
  EXPECT_DOUBLE_EQ(model.attention_s(mla), attention_flops(mla) / (100e12 * 0.5));
}

TEST(ComputeModel, Fp8GemmsUseTheirOwnCeiling) {
  config::HardwareProfile p = profile();
  p.gpu.peak_flops_per_s[Dtype::kFp8] = 200e12;
  p.compute.gemm_efficiency_fp8 = 0.7;
  WarningLog warnings;
  const ComputeModel model(p, &warnings);
  const double flops = 2.0 * 8192 * 8192 * 8192;
  EXPECT_DOUBLE_EQ(model.gemm_s(8192, 8192, 8192, Dtype::kFp8), flops / (200e12 * 0.7));
  EXPECT_EQ(warnings.size(), 0u);
  // Without it, the bf16 ceiling, with a warning.
  p.compute.gemm_efficiency_fp8 = 0;
  WarningLog fallback;
  const ComputeModel without(p, &fallback);
  EXPECT_DOUBLE_EQ(without.gemm_s(8192, 8192, 8192, Dtype::kFp8), flops / (200e12 * 0.8));
  ASSERT_EQ(fallback.size(), 1u);
  EXPECT_EQ(
      fallback.messages()[0],
      "hardware profile test gives no compute.gemm_efficiency_fp8; fp8 GEMMs use compute.gemm_efficiency, "
      "measured on another dtype");
}

TEST(ComputeModel, MissingEfficiencyAssumesIdealAndSaysSo) {
  config::HardwareProfile p = profile();
  p.compute.gemm_efficiency = 0;
  WarningLog warnings;
  const ComputeModel model(p, &warnings);
  EXPECT_DOUBLE_EQ(model.gemm_s(8192, 8192, 8192, Dtype::kBf16), 2.0 * 8192 * 8192 * 8192 / 100e12);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings.messages()[0],
            "hardware profile test gives no compute.gemm_efficiency; assuming the ideal value 1");
  EXPECT_THROW(model.gemm_s(8, 8, 8, Dtype::kFp8), std::invalid_argument);
}

// Measured samples are times: a what-if on a rate cannot reach the shapes they cover, and says so.
TEST(ComputeModel, WhatIfOnARateThatSamplesShadowIsWarned) {
  config::HardwareProfile p = profile();
  p.what_if = {{"gpu.peak_flops.bf16", "400TFLOP/s", {"s.yaml", 3, 5}}};
  {
    WarningLog warnings;
    const ComputeModel model(p, &warnings);
    EXPECT_EQ(warnings.size(), 0u);  // no samples: the roofline takes the new rate
  }
  p.gemm_samples.push_back({Dtype::kBf16, 4096, 4096, 4096, 1e-3, {}});
  WarningLog warnings;
  const ComputeModel model(p, &warnings);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings.messages()[0],
            "the what-if on gpu.peak_flops does not change the 1 measured gemm_samples of hardware profile "
            "test, which time the shapes they cover; set hardware_set: {gemm_samples: []} to price every "
            "shape from the rates");
}

}  // namespace
}  // namespace trainsim::cost

namespace trainsim::cost {
namespace {

// A stack profile scales each kind of kernel's rate by its own fraction, measured samples included.
TEST(ComputeModel, StackFractionsScaleEachKindOfKernel) {
  config::HardwareProfile p = profile();
  WarningLog warnings;
  const ComputeModel hardware(p, &warnings);
  config::StackProfile& stack = p.stack.emplace();
  stack.parameters[config::StackParameter::kGemmFraction] = 0.5;
  stack.parameters[config::StackParameter::kAttentionFraction] = 0.8;
  stack.parameters[config::StackParameter::kMemoryFraction] = 0.25;
  stack.parameters[config::StackParameter::kHostDispatch] = 7e-6;
  const ComputeModel stacked(p, &warnings);
  EXPECT_DOUBLE_EQ(stacked.gemm_s(8192, 8192, 8192, Dtype::kBf16),
                   2 * hardware.gemm_s(8192, 8192, 8192, Dtype::kBf16));
  const AttentionCall call{AttentionPass::kForward, true, Dtype::kBf16, 1, 32, 32, 8192, 8192, 128};
  EXPECT_DOUBLE_EQ(stacked.attention_s(call), hardware.attention_s(call) / 0.8);
  EXPECT_DOUBLE_EQ(stacked.memory_s(1e9), 4 * hardware.memory_s(1e9));
  EXPECT_DOUBLE_EQ(stacked.host_dispatch_s(), 7e-6);
  EXPECT_DOUBLE_EQ(hardware.host_dispatch_s(), 0);
  // The launch floor is the GPU's, not the stack's.
  EXPECT_DOUBLE_EQ(stacked.gemm_s(8, 8, 8, Dtype::kBf16), 5e-6);
  p.gemm_samples.push_back({Dtype::kBf16, 4096, 4096, 4096, 1e-3, {}});
  const ComputeModel measured(p, &warnings);
  EXPECT_NEAR(measured.gemm_s(4096, 4096, 4096, Dtype::kBf16), 2e-3, 1e-12);
}

}  // namespace
}  // namespace trainsim::cost
