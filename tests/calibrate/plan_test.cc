#include "calibrate/plan.h"

#include <algorithm>
#include <set>

#include <gtest/gtest.h>

#include "calibrate/collective_kinds.h"
#include "sim/config/loader.h"
#include "sim/workload/kernel_shapes.h"

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

// The calls a shipped scenario's simulation prices.
workload::KernelShapes scenario(const std::string& file) {
  return workload::kernel_shapes(
      config::load_scenario(std::filesystem::path(TRAINSIM_SOURCE_DIR) / "scenarios" / file));
}

bool noted(const CalibrationPlan& plan, const std::string& text) {
  return std::any_of(plan.notes.begin(), plan.notes.end(),
                     [&](const std::string& n) { return n.find(text) != std::string::npos; });
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
  const workload::KernelShapes s = scenario("04-llama3-8b-ulysses-8xh100.yaml");
  const CalibrationPlan with = make_plan({true, 8, s}, gpu());
  const CalibrationPlan without = make_plan({true, 8, std::nullopt}, gpu());
  EXPECT_GT(with.gemms.size(), without.gemms.size());
  const CalibrationPlan on_cpu = make_plan({true, 2, s}, cpu());  // bf16 and far too large for the references
  EXPECT_EQ(on_cpu.gemms.size(), make_plan({true, 2, std::nullopt}, cpu()).gemms.size());
  EXPECT_FALSE(on_cpu.notes.empty());
}

// Each call of a one-node scenario is measured, or a note names it and says why not.
TEST(Plan, EveryCallOfTheScenarioIsMeasuredOrNamed) {
  for (const char* file : {"04-llama3-8b-ulysses-8xh100.yaml", "05-llama3-8b-fpdt-2m-4xa100.yaml"}) {
    SCOPED_TRACE(file);
    const workload::KernelShapes s = scenario(file);
    const CalibrationPlan plan = make_plan({false, 8, s}, gpu());
    for (const workload::KernelShapes::Gemm& g : s.gemms) {
      const GemmCase c{g.dtype, g.m, g.n, g.k};
      const bool measured = std::any_of(plan.gemms.begin(), plan.gemms.end(),
                                        [&](const GemmCase& p) { return describe(p) == describe(c); });
      EXPECT_TRUE(measured || noted(plan, describe(c))) << describe(c);
    }
    for (const workload::KernelShapes::Attention& a : s.attentions) {
      const AttentionCase c{a.pass,     a.causal, a.dtype,  a.batch,   a.heads,
                            a.kv_heads, a.q_len,  a.kv_len, a.head_dim};
      const bool measured = std::any_of(plan.attentions.begin(), plan.attentions.end(),
                                        [&](const AttentionCase& p) { return describe(p) == describe(c); });
      EXPECT_TRUE(measured || noted(plan, describe(c))) << describe(c);
    }
    ASSERT_FALSE(s.collectives.empty());
    for (const workload::KernelShapes::Collective& x : s.collectives) {
      const CollectiveCase c{x.kind, static_cast<int>(x.ranks), x.bytes};
      const bool measured =
          std::any_of(plan.collectives.begin(), plan.collectives.end(), [&](const CollectiveCase& p) {
            return p.kind == c.kind && p.ranks == c.ranks && p.bytes == c.bytes;
          });
      EXPECT_TRUE(x.one_node);
      EXPECT_TRUE(measured || noted(plan, describe(c))) << describe(c);
    }
    for (const workload::KernelShapes::Copy& x : s.copies) {
      const bool measured = std::any_of(plan.copies.begin(), plan.copies.end(), [&](const CopyCase& p) {
        return p.direction == x.direction && p.bytes == x.bytes;
      });
      EXPECT_TRUE(measured || noted(plan, "copy")) << x.bytes;
    }
  }
  // FPDT offloads and fetches its chunks: the copies are the scenario's own sizes.
  EXPECT_FALSE(scenario("05-llama3-8b-fpdt-2m-4xa100.yaml").copies.empty());
}

TEST(Plan, CollectivesOfGroupsAcrossNodesAreLeftToTheNetwork) {
  const workload::KernelShapes s = scenario("03-gpt3-175b-64xa100.yaml");
  ASSERT_TRUE(std::any_of(s.collectives.begin(), s.collectives.end(),
                          [](const workload::KernelShapes::Collective& c) { return !c.one_node; }));
  const CalibrationPlan plan = make_plan({true, 8, s}, gpu());
  EXPECT_TRUE(noted(plan, "their groups span nodes"));
  const CalibrationPlan on_four = make_plan({true, 4, s}, gpu());  // its tp-8 group is larger than the node
  EXPECT_TRUE(noted(on_four, "this node has 4 devices"));
}

TEST(Plan, LatentAttentionIsNamedAsBeyondTheKernels) {
  workload::KernelShapes s;
  s.attentions.push_back(
      {config::AttentionPass::kForward, Dtype::kBf16, 1, 16, 16, 1024, 1024, 192, 128, true});
  const CalibrationPlan plan = make_plan({true, 1, s}, gpu());
  EXPECT_TRUE(noted(plan, "its values have 128 dimensions"));
}

}  // namespace
}  // namespace trainsim::calibrate
