// FLOPs per iteration: the graphs and the closed forms against Narayanan et al. 2021 and
// Korthikanti et al. 2022 (ground-truth.md A.7, A.8, B.1, B.2).
#include "sim/analytic/flops.h"

#include <gtest/gtest.h>

#include "sim/workload/builder.h"
#include "tests/workload/workload_test_util.h"

namespace trainsim::analytic {
namespace {

using config::Recompute;
using config::SequenceParallel;

// Model/hardware FLOPs of every rank, one class graph at a time.
workload::FlopTotals graph_flops(const config::Scenario& s) {
  const workload::ParallelPlan plan = workload::make_plan(s);
  workload::FlopTotals total;
  for (const workload::SymmetryClass& c : plan.symmetry_classes()) {
    const workload::FlopTotals f =
        workload::flop_totals(workload::build_rank_graph(s, plan, c.representative));
    total.model += f.model * static_cast<double>(c.size);
    total.hardware += f.hardware * static_cast<double>(c.size);
    total.executed += f.executed * static_cast<double>(c.size);
  }
  return total;
}

// Narayanan Table 1 with full recomputation: F = 96 B s l h^2 (1 + s/6h + V/16lh). The table gives
// no micro-batch size (FLOPs do not depend on it); we take the largest that leaves pp micro-batches.
TEST(IterationFlops, GraphsReproduceNarayananTable1) {
  struct Row {
    const char* preset;
    int64_t tp, pp, gpus, batch;
  };
  const Row rows[] = {{"megatron-1.7b", 1, 1, 32, 512},      {"megatron-3.6b", 2, 1, 64, 512},
                      {"megatron-7.5b", 4, 1, 128, 512},     {"megatron-18.4b", 8, 1, 256, 1024},
                      {"megatron-39.1b", 8, 2, 512, 1536},   {"megatron-76.1b", 8, 4, 1024, 1792},
                      {"megatron-145.6b", 8, 8, 1536, 2304}, {"megatron-310.1b", 8, 16, 1920, 2160},
                      {"megatron-530b", 8, 35, 2520, 2520},  {"megatron-1t", 8, 64, 3072, 3072}};
  for (const Row& row : rows) {
    testing::PlanSpec spec;
    spec.tp = row.tp;
    spec.pp = row.pp;
    spec.dp = row.gpus / (row.tp * row.pp);
    spec.recompute = Recompute::kFull;
    const int64_t micro_batch = row.batch / spec.dp / row.pp;
    const config::Scenario s = testing::make_scenario(row.preset, row.batch, micro_batch, spec);
    const double published = narayanan_flops(s.model, static_cast<double>(row.batch));
    const workload::FlopTotals f = graph_flops(s);
    EXPECT_NEAR(f.hardware / published, 1.0, 1e-12) << row.preset;
    EXPECT_NEAR(iteration_flops(s).hardware / published, 1.0, 1e-12) << row.preset;
  }
}

// Korthikanti Table 3 configurations: model FLOPs 72 B L s h^2 (1 + s/6h + V/12hL); with selective
// recomputation the graphs add one forward of the attention core.
TEST(IterationFlops, KorthikantiTable3Configurations) {
  struct Row {
    const char* preset;
    int64_t tp, pp, gpus, batch, micro_batch, vpp;
    double seconds, mfu, hfu;  // Table 5, sequence parallel + selective recompute
  };
  const Row rows[] = {{"megatron-22b", 8, 1, 8, 4, 4, 1, 1.10, 0.415, 0.437},
                      {"megatron-175b", 8, 8, 64, 64, 1, 3, 13.75, 0.514, 0.528},
                      {"megatron-530b", 8, 35, 280, 280, 1, 3, 37.83, 0.560, 0.570},
                      {"megatron-1t", 8, 64, 512, 512, 1, 1, 71.49, 0.563, 0.570}};
  for (const Row& row : rows) {
    testing::PlanSpec spec;
    spec.tp = row.tp;
    spec.pp = row.pp;
    spec.dp = row.gpus / (row.tp * row.pp);
    spec.vpp = row.vpp;
    spec.schedule = row.vpp > 1 ? config::Schedule::kInterleaved : config::Schedule::kOneFOneB;
    spec.sequence = SequenceParallel::kMegatron;
    spec.recompute = Recompute::kSelective;
    const config::Scenario s = testing::make_scenario(row.preset, row.batch, row.micro_batch, spec);
    const double b = static_cast<double>(row.batch);
    const double model = korthikanti_model_flops(s.model, b);
    const workload::FlopTotals f = graph_flops(s);
    EXPECT_NEAR(f.model / model, 1.0, 1e-12) << row.preset;
    const double core = b * static_cast<double>(s.model.layers) * 4 * 2048.0 * 2048.0 * s.model.hidden;
    EXPECT_NEAR(f.hardware / (model + core), 1.0, 1e-12) << row.preset;
    EXPECT_NEAR(iteration_flops(s).hardware / f.hardware, 1.0, 1e-12) << row.preset;
    // The published MFU and HFU follow from the paper's formulas, 312 TFLOP/s and Table 5's times.
    const double peak = row.seconds * static_cast<double>(row.gpus) * 312e12;
    EXPECT_NEAR(model / peak, row.mfu, 0.003) << row.preset;
    EXPECT_NEAR(korthikanti_selective_hardware_flops(s.model, b) / peak, row.hfu, 0.003) << row.preset;
  }
}

TEST(IterationFlops, MixtureOfExpertsCountsTheRoutedTokensOnly) {
  testing::PlanSpec spec;
  spec.dp = 4;
  spec.ep = 4;
  config::Scenario s = testing::make_scenario("mixtral-8x7b", 4, 1, spec);
  s.model.layers = 2;
  s.model.moe.capacity_factor = 1.5;  // padding: executed, not counted
  const double seq = 4096, h = 4096, d = 128, kv = 8, heads = 32, f = 14336, v = 32000, experts = 8, k = 2;
  const double layer = 2 * seq * (h * (heads + 2 * kv) * d + heads * d * h + h * experts + k * 3 * h * f) +
                       4 * seq * seq * heads * d;
  const double expected = 3 * 4 * (2 * layer + 2 * seq * h * v);
  EXPECT_NEAR(iteration_flops(s).model / expected, 1.0, 1e-12);
  EXPECT_NEAR(graph_flops(s).model / expected, 1.0, 1e-12);
  // The experts' GEMMs execute 1.5 times their routed FLOPs.
  config::Scenario balanced = s;
  balanced.model.moe.capacity_factor = 1;
  const double experts_model = 3 * 4 * 2 * 2 * seq * k * 3 * h * f;
  EXPECT_NEAR(graph_flops(s).executed - graph_flops(balanced).executed, 0.5 * experts_model,
              1e-9 * experts_model);
  EXPECT_EQ(graph_flops(s).model, graph_flops(balanced).model);
}

TEST(IterationFlops, GeneralisesToGqaAndSwiglu) {
  testing::PlanSpec spec;
  spec.tp = 2;
  config::Scenario s = testing::make_scenario("llama3-8b", 2, 1, spec);
  s.model.layers = 2;
  const double seq = 8192, h = 4096, d = 128, kv = 8, heads = 32, f = 14336, v = 128256;
  const double layer =
      2 * seq * (h * (heads + 2 * kv) * d + heads * d * h + 3 * h * f) + 4 * seq * seq * heads * d;
  const double expected = 3 * 2 * (2 * layer + 2 * seq * h * v);
  EXPECT_NEAR(iteration_flops(s).model / expected, 1.0, 1e-12);
  EXPECT_NEAR(graph_flops(s).model / expected, 1.0, 1e-12);
  // Causal attention executes about half the attention FLOPs of the convention.
  EXPECT_LT(graph_flops(s).executed, graph_flops(s).model);
}

TEST(IterationFlops, LatentAttentionCountsItsProjectionsOnce) {
  // DeepSeek-V2's attention on a dense model, on tp 4 without sequence parallelism: every TP rank
  // computes the down projections of every token, which count once.
  testing::PlanSpec spec;
  spec.tp = 4;
  config::Scenario s = testing::make_scenario("deepseek-v2", 2, 1, spec);
  s.model.moe = {};
  s.model.layers = 2;
  const double seq = 4096, h = 5120, heads = 128, f = 12288, v = 102400;
  const double q_latent = 1536, kv_latent = 512, rope = 64, d = 128, dv = 128;
  const double projections = h * q_latent + q_latent * heads * (d + rope) + h * (kv_latent + rope) +
                             kv_latent * heads * (d + dv) + heads * dv * h;
  const double layer = 2 * seq * (projections + 3 * h * f) + 2 * seq * seq * heads * (d + rope + dv);
  const double expected = 3 * 2 * (2 * layer + 2 * seq * h * v);
  EXPECT_NEAR(iteration_flops(s).model / expected, 1.0, 1e-12);
  EXPECT_NEAR(graph_flops(s).model / expected, 1.0, 1e-12);
  // The 4 ranks execute the down projections 4 times; under Megatron-SP each projects its own
  // quarter of the tokens.
  config::Scenario sharded = s;
  sharded.parallelism.sequence_parallel = SequenceParallel::kMegatron;
  const double down = 3 * 2 * 2 * 2 * seq * h * (q_latent + kv_latent + rope);  // fwd + 2 bwd, 2 layers
  EXPECT_NEAR(graph_flops(s).executed - graph_flops(sharded).executed, 3 * down, 1e-9 * down);
  EXPECT_EQ(graph_flops(s).model, graph_flops(sharded).model);
}

}  // namespace
}  // namespace trainsim::analytic
