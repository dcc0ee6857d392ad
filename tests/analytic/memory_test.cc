// Closed-form memory: Korthikanti Table 2 and Fig. 7 (ground-truth.md A.8, B.2), ZeRO model
// states (A.9), FPDT's worked example (seed-papers.md A9).
#include "sim/analytic/memory.h"

#include <cmath>

#include <gtest/gtest.h>

#include "tests/workload/workload_test_util.h"

namespace trainsim::analytic {
namespace {

using config::Recompute;
using config::SequenceParallel;

// Fig. 7: activation memory relative to the TP baseline, for the 22B and 175B models (t = 8). The
// values are Calculon's transcription (ground-truth.md B.2, [S1]); Table 2's closed forms reproduce
// them to within 0.1 percentage points.
TEST(KorthikantiActivations, RelativeMemoryOfFigure7) {
  struct Row {
    double s, h, a;
    double sp, selective, both, full;  // percent of the baseline
  };
  const Row rows[] = {{2048, 6144, 64, 66.84, 49.42, 16.18, 7.64},
                      {2048, 12288, 96, 62.04, 56.53, 18.49, 8.71}};
  for (const Row& r : rows) {
    const auto bytes = [&](ActivationConfig c) {
      return korthikanti_layer_activation_bytes(c, r.s, 1, r.h, r.a, 8);
    };
    const double base = bytes(ActivationConfig::kTensorParallel);
    EXPECT_NEAR(100 * bytes(ActivationConfig::kTensorSequenceParallel) / base, r.sp, 0.1);
    EXPECT_NEAR(100 * bytes(ActivationConfig::kTensorParallelSelective) / base, r.selective, 0.1);
    EXPECT_NEAR(100 * bytes(ActivationConfig::kTensorSequenceParallelSelective) / base, r.both, 0.1);
    EXPECT_NEAR(100 * bytes(ActivationConfig::kFullRecompute) / base, r.full, 0.1);
  }
}

TEST(KorthikantiActivations, ScenarioSelectsTheTableRow) {
  const auto row = [](SequenceParallel seq, Recompute rc, int64_t tp, const char* preset = "megatron-22b") {
    testing::PlanSpec spec;
    spec.tp = tp;
    spec.sequence = seq;
    spec.recompute = rc;
    ActivationConfig c = ActivationConfig::kNoParallelism;
    const bool ok = korthikanti_config(testing::make_scenario(preset, 8, 1, spec), &c);
    return ok ? static_cast<int>(c) : -1;
  };
  EXPECT_EQ(row(SequenceParallel::kNone, Recompute::kNone, 1),
            static_cast<int>(ActivationConfig::kNoParallelism));
  EXPECT_EQ(row(SequenceParallel::kMegatron, Recompute::kSelective, 8),
            static_cast<int>(ActivationConfig::kTensorSequenceParallelSelective));
  EXPECT_EQ(row(SequenceParallel::kNone, Recompute::kFull, 8),
            static_cast<int>(ActivationConfig::kFullRecompute));
  EXPECT_EQ(row(SequenceParallel::kNone, Recompute::kNone, 8, "llama3-8b"), -1);
}

TEST(KorthikantiActivations, FirstStageHoldsTheWholeModelsLayers) {
  // 1F1B: p micro-batches of L/p layers; interleaving multiplies by 1 + (p-1)/(p v).
  EXPECT_DOUBLE_EQ(korthikanti_first_stage_activation_bytes(10, 96, 8, 1, 64, config::Schedule::kOneFOneB),
                   960);
  EXPECT_DOUBLE_EQ(korthikanti_first_stage_activation_bytes(10, 96, 8, 3, 64, config::Schedule::kInterleaved),
                   960 * (1 + 7.0 / 24));
  EXPECT_DOUBLE_EQ(korthikanti_first_stage_activation_bytes(10, 96, 8, 1, 64, config::Schedule::kGpipe),
                   10 * 12 * 64);
}

// seed-papers.md A9 worked example: Llama-3-8B, S = 2M, P = 4, b = 1, c = 64K.
TEST(FpdtMemory, WorkedExampleQuantities) {
  testing::PlanSpec spec;
  spec.sp = 4;
  spec.sequence = SequenceParallel::kFpdt;
  config::Scenario s = testing::make_scenario("llama3-8b", 1, 1, spec);
  s.model.seq_len = 2 * 1024 * 1024;
  s.parallelism.fpdt.chunk_tokens = 65536;
  s.parallelism.cpu_checkpointing = true;
  s.parallelism.recompute = Recompute::kFull;
  const FpdtMemory f = fpdt_memory(s);
  const double mib = 1024.0 * 1024, gib = 1024 * mib;
  EXPECT_EQ(f.chunks, 32);
  EXPECT_DOUBLE_EQ(f.q_chunk_bytes, 128 * mib);
  EXPECT_DOUBLE_EQ(f.kv_chunk_bytes, 32 * mib);
  EXPECT_DOUBLE_EQ(f.out_accumulator_bytes, 256 * mib);
  EXPECT_DOUBLE_EQ(f.x_chunk_bytes, 128 * mib);
  EXPECT_DOUBLE_EQ(f.sequence_tensor_bytes, 4 * gib);
  EXPECT_NEAR(f.host_per_live_layer_bytes / gib, 22, 0.5);  // "≈ 22 GiB per GPU"
  EXPECT_DOUBLE_EQ(f.host_checkpoint_bytes, 128 * gib);     // "32 x 4 GiB = 128 GiB per GPU"
}

}  // namespace
}  // namespace trainsim::analytic
