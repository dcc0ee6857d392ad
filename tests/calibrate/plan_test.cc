#include "calibrate/plan.h"

#include <algorithm>
#include <set>

#include <gtest/gtest.h>

#include "calibrate/collective_kinds.h"
#include "calibrate/scenario_cases.h"
#include "sim/config/loader.h"

namespace trainsim::calibrate {
namespace {

using config::CollectiveKind;
using config::Dtype;

Capabilities gpu() {
  Capabilities c;
  c.scale = DeviceScale::kGpu;
  c.gemm_dtypes = {Dtype::kBf16, Dtype::kFp16, Dtype::kFp8};
  c.attention_dtypes = {Dtype::kBf16, Dtype::kFp16};
  c.attention_head_dims = {64, 128};
  c.max_case_flops = 1e14;
  return c;
}

Capabilities cpu() {
  Capabilities c;
  c.scale = DeviceScale::kCpuReference;
  c.gemm_dtypes = {Dtype::kFp32, Dtype::kFp64};
  c.attention_dtypes = {Dtype::kFp32};
  c.attention_head_dims = {64, 128};
  c.max_case_flops = 4e9;
  return c;
}

config::Scenario scenario(const std::string& file) {
  return config::load_scenario(std::filesystem::path(TRAINSIM_SOURCE_DIR) / "scenarios" / file);
}

TEST(Plan, CollectivesSweepEightBytesToOneGibibyteOverEveryGroupSize) {
  const CalibrationPlan plan = make_plan({false, 8, std::nullopt}, gpu());
  for (const CollectiveKind kind : measured_collectives()) {
    std::set<int> groups;
    double smallest = 1e30, largest = 0;
    for (const CollectiveCase& c : plan.collectives) {
      if (c.kind != kind) continue;
      groups.insert(c.ranks);
      if (kind != CollectiveKind::kBarrier) {
        smallest = std::min(smallest, c.bytes);
        largest = std::max(largest, c.bytes);
      }
    }
    SCOPED_TRACE(std::string(config::to_string(kind)));
    EXPECT_EQ(groups, (std::set<int>{1, 2, 3, 4, 5, 6, 7, 8}));
    if (kind != CollectiveKind::kBarrier) {
      EXPECT_EQ(smallest, 8);
      EXPECT_GE(largest, 1 << 30);
    }
  }
}

TEST(Plan, QuickRunsFewerGroupsAndSizes) {
  const CalibrationPlan quick = make_plan({true, 6, std::nullopt}, gpu());
  const CalibrationPlan full = make_plan({false, 6, std::nullopt}, gpu());
  std::set<int> groups;
  for (const CollectiveCase& c : quick.collectives) groups.insert(c.ranks);
  EXPECT_EQ(groups, (std::set<int>{1, 2, 4, 6}));
  EXPECT_LT(quick.item_count() * 3, full.item_count());
  EXPECT_LT(quick.compute_policy.repetitions, full.compute_policy.repetitions);
  // Still the whole size range, and copies from one GPU and from all at once.
  EXPECT_GE(std::max_element(quick.collectives.begin(), quick.collectives.end(),
                             [](const auto& a, const auto& b) { return a.bytes < b.bytes; })
                ->bytes,
            1 << 30);
  std::set<int> concurrency;
  for (const CopyCase& c : quick.copies) concurrency.insert(c.concurrent);
  EXPECT_EQ(concurrency, (std::set<int>{1, 6}));
}

TEST(Plan, EveryCaseFitsTheBackend) {
  for (const Capabilities& caps : {gpu(), cpu()}) {
    for (const bool quick : {true, false}) {
      const CalibrationPlan plan = make_plan({quick, 2, std::nullopt}, caps);
      EXPECT_FALSE(plan.gemms.empty());
      EXPECT_FALSE(plan.attentions.empty());
      for (const GemmCase& c : plan.gemms) {
        EXPECT_LE(c.flops(), caps.max_case_flops) << describe(c);
        EXPECT_NE(std::find(caps.gemm_dtypes.begin(), caps.gemm_dtypes.end(), c.dtype),
                  caps.gemm_dtypes.end());
      }
      for (const AttentionCase& c : plan.attentions) {
        EXPECT_LE(c.flops(), caps.max_case_flops) << describe(c);
        EXPECT_NE(std::find(caps.attention_dtypes.begin(), caps.attention_dtypes.end(), c.dtype),
                  caps.attention_dtypes.end());
      }
    }
  }
}

TEST(Plan, AttentionCoversBothPassesMasksAndHeadDims) {
  const CalibrationPlan plan = make_plan({true, 1, std::nullopt}, gpu());
  std::set<std::tuple<config::AttentionPass, bool, int64_t>> seen;
  for (const AttentionCase& c : plan.attentions) seen.insert({c.pass, c.causal, c.head_dim});
  EXPECT_EQ(seen.size(), 8u);
}

TEST(Plan, IsDeterministicWithoutDuplicates) {
  const CalibrationPlan a = make_plan({false, 4, scenario("04-llama3-8b-ulysses-8xh100.yaml")}, gpu());
  const CalibrationPlan b = make_plan({false, 4, scenario("04-llama3-8b-ulysses-8xh100.yaml")}, gpu());
  ASSERT_EQ(a.gemms.size(), b.gemms.size());
  std::set<std::tuple<Dtype, int64_t, int64_t, int64_t>> unique;
  for (size_t i = 0; i < a.gemms.size(); ++i) {
    EXPECT_EQ(describe(a.gemms[i]), describe(b.gemms[i]));
    unique.insert({a.gemms[i].dtype, a.gemms[i].m, a.gemms[i].n, a.gemms[i].k});
  }
  EXPECT_EQ(unique.size(), a.gemms.size());
}

TEST(Plan, ScenarioShapesJoinTheGridOrAreNamedWhenTheyCannotRun) {
  const config::Scenario s = scenario("04-llama3-8b-ulysses-8xh100.yaml");
  const CalibrationPlan with = make_plan({true, 8, s}, gpu());
  const CalibrationPlan without = make_plan({true, 8, std::nullopt}, gpu());
  EXPECT_GT(with.gemms.size(), without.gemms.size());
  const CalibrationPlan on_cpu = make_plan({true, 2, s}, cpu());  // bf16 and far too large for the references
  EXPECT_EQ(on_cpu.gemms.size(), make_plan({true, 2, std::nullopt}, cpu()).gemms.size());
  EXPECT_FALSE(on_cpu.notes.empty());
}

TEST(ScenarioCases, FpdtProjectsOneChunkPerGemmAndAttendsChunkBlocks) {
  const config::Scenario s = scenario("05-llama3-8b-fpdt-2m-4xa100.yaml");
  const int64_t tokens = s.training.micro_batch * s.parallelism.fpdt.chunk_tokens / s.parallelism.sp;
  const std::vector<GemmCase> gemms = scenario_gemms(s);
  const config::Model& m = s.model;
  const int64_t qkv = (m.heads + 2 * m.kv_heads) * m.head_dim / s.parallelism.tp;
  ASSERT_FALSE(gemms.empty());
  EXPECT_EQ(gemms[0].m, tokens);  // QKV forward: chunk tokens x qkv width x hidden
  EXPECT_EQ(gemms[0].n, qkv);
  EXPECT_EQ(gemms[0].k, m.hidden);
  EXPECT_EQ(gemms[0].dtype, s.training.dtype);
  const std::vector<AttentionCase> blocks = scenario_attentions(s);
  ASSERT_EQ(blocks.size(), 4u);  // diagonal (causal) and off-diagonal (full), forward and backward
  for (const AttentionCase& c : blocks) {
    EXPECT_EQ(c.q_len, s.parallelism.fpdt.chunk_tokens);
    EXPECT_EQ(c.kv_len, s.parallelism.fpdt.chunk_tokens);
    EXPECT_EQ(c.heads, m.heads / (s.parallelism.tp * s.parallelism.sp));
    EXPECT_EQ(c.kv_heads, std::max<int64_t>(1, m.kv_heads / (s.parallelism.tp * s.parallelism.sp)));
  }
  EXPECT_TRUE(blocks[0].causal);
  EXPECT_FALSE(blocks[2].causal);
}

TEST(ScenarioCases, DenseTrainingAttendsTheWholeSequence) {
  const config::Scenario s = scenario("02-megatron-22b-tp8.yaml");
  const std::vector<AttentionCase> blocks = scenario_attentions(s);
  ASSERT_EQ(blocks.size(), 2u);
  EXPECT_EQ(blocks[0].q_len, s.model.seq_len);
  EXPECT_TRUE(blocks[0].causal);
  EXPECT_EQ(blocks[0].heads, s.model.heads / s.parallelism.tp);
  // Forward, input-gradient and weight-gradient shapes of five linear layers, shared shapes once.
  EXPECT_GE(scenario_gemms(s).size(), 10u);
}

}  // namespace
}  // namespace trainsim::calibrate
