// Memory from the graphs' alloc/free events: Korthikanti Table 2 per layer, ZeRO model states,
// pipeline in-flight activations, FPDT's worked example (seed-papers.md A9).
#include "sim/workload/memory.h"

#include <array>

#include <gtest/gtest.h>

#include "sim/analytic/memory.h"
#include "sim/workload/activations.h"
#include "sim/workload/builder.h"
#include "sim/workload/layout.h"
#include "sim/workload/model_state.h"
#include "sim/workload/shapes.h"
#include "tests/workload/workload_test_util.h"

namespace trainsim::workload {
namespace {

using config::Recompute;
using config::SequenceParallel;
constexpr double kGiB = 1024.0 * 1024 * 1024;
constexpr double kMiB = 1024.0 * 1024;

int cat(MemoryCategory c) { return static_cast<int>(c); }

// What layer 1 of micro-batch 0 keeps for its backward: its stash and its input (allocated by
// layer 0's forward as its output).
double layer_one_activation_bytes(const Graph& g) {
  return testing::sum_bytes(g, [](const Op& op) {
    return op.kind == OpKind::kAlloc && op.phase == Phase::kForward && op.micro_batch == 0 &&
           ((op.layer == 1 && op.label == OpLabel::kActivationStash) ||
            (op.layer == 0 && op.label == OpLabel::kLayerInput));
  });
}

// Korthikanti et al. 2022 Table 2 with the 22B model of Table 3 (a = 64, h = 6144, s = 2048), b = 4.
TEST(ActivationMemory, GraphReproducesKorthikantiTable2) {
  const double s = 2048, b = 4, h = 6144, a = 64;
  const double sbh = s * b * h;
  struct Row {
    const char* name;
    int64_t tp;
    SequenceParallel sequence;
    Recompute recompute;
    double bytes;
  };
  const double t = 8;
  const Row rows[] = {
      {"no parallelism", 1, SequenceParallel::kNone, Recompute::kNone, sbh * (34 + 5 * a * s / h)},
      {"tensor parallel", 8, SequenceParallel::kNone, Recompute::kNone,
       sbh * (10 + 24 / t + 5 * a * s / (h * t))},
      {"tensor + sequence parallel", 8, SequenceParallel::kMegatron, Recompute::kNone,
       sbh * (34 / t + 5 * a * s / (h * t))},
      {"tensor parallel + selective recompute", 8, SequenceParallel::kNone, Recompute::kSelective,
       sbh * (10 + 24 / t)},
      {"tensor + sequence parallel + selective recompute", 8, SequenceParallel::kMegatron,
       Recompute::kSelective, sbh * 34 / t},
      {"full recompute", 8, SequenceParallel::kNone, Recompute::kFull, sbh * 2},
  };
  for (const Row& row : rows) {
    testing::PlanSpec spec;
    spec.tp = row.tp;
    spec.sequence = row.sequence;
    spec.recompute = row.recompute;
    config::Scenario sc = testing::make_scenario("megatron-22b", 4, 4, spec);
    sc.model.layers = 4;  // the per-layer bytes do not depend on depth
    const ParallelPlan plan = make_plan(sc);
    const Graph g = build_rank_graph(sc, plan, 0);
    EXPECT_DOUBLE_EQ(layer_one_activation_bytes(g), row.bytes) << row.name;
  }
}

// FP8 training keeps each linear layer's input as the FP8 GEMM read it, one byte per element, for the
// weight gradient (Transformer Engine's modules): of Table 2's 34 sbh/t with tensor and sequence
// parallelism, the QKV, projection, FC1 and FC2 inputs (sbh/t each, 4 sbh/t for FC2's) halve.
TEST(ActivationMemory, Fp8KeepsTheLinearLayersInputsInFp8) {
  testing::PlanSpec spec;
  spec.tp = 8;
  spec.sequence = SequenceParallel::kMegatron;
  config::Scenario sc = testing::make_scenario("megatron-22b", 4, 4, spec);
  sc.model.layers = 4;
  const double bf16 = layer_one_activation_bytes(build_rank_graph(sc, make_plan(sc), 0));
  sc.training.dtype = config::Dtype::kFp8;
  const double fp8 = layer_one_activation_bytes(build_rank_graph(sc, make_plan(sc), 0));
  const double sbh = 2048.0 * 4 * 6144;
  EXPECT_DOUBLE_EQ(bf16 - fp8, sbh / 8 * (1 + 1 + 1 + 4));
}

// Ulysses wraps the model's own attention kernel: a GPT-style model keeps Megatron's unfused one (its
// scores stored for the backward) unless the scenario names the fused one.
TEST(ActivationMemory, UlyssesKeepsTheModelsAttentionKernel) {
  testing::PlanSpec spec;
  spec.sp = 2;
  spec.sequence = SequenceParallel::kUlysses;
  config::Scenario sc = testing::make_scenario("megatron-22b", 4, 4, spec);
  sc.model.layers = 4;
  const auto attention_ops = [](const Graph& g, bool fused) {
    return testing::count_ops(g, [fused](const Op& op) {
      return op.kind == OpKind::kAttentionForward && op.attention.fused == fused;
    });
  };
  const Graph unfused = build_rank_graph(sc, make_plan(sc), 0);
  EXPECT_GT(attention_ops(unfused, false), 0);
  EXPECT_EQ(attention_ops(unfused, true), 0);
  sc.model.attention = config::AttentionKernel::kFused;
  const Graph fused = build_rank_graph(sc, make_plan(sc), 0);
  EXPECT_EQ(attention_ops(fused, false), 0);
  EXPECT_GT(attention_ops(fused, true), 0);
  // The unfused kernel keeps the scores (Korthikanti's 5as/h per token and hidden unit, over sp), the
  // fused one its fp32 log-sum-exp per query and head.
  const double s = 2048, b = 4, h = 6144, a = 64;
  EXPECT_DOUBLE_EQ(layer_one_activation_bytes(unfused) - layer_one_activation_bytes(fused),
                   s * b * h * 5 * a * s / h / 2 - a / 2 * s * b * 4);
}

TEST(ActivationMemory, FirstOneFOneBStageHoldsPipelineDepthMicroBatches) {
  testing::PlanSpec spec;
  spec.tp = 2;
  spec.pp = 4;
  spec.recompute = Recompute::kFull;
  config::Scenario sc = testing::make_scenario("megatron-1.7b", 8, 1, spec);
  const ParallelPlan plan = make_plan(sc);
  const std::vector<Graph> graphs = build_class_graphs(sc, plan);
  const double input = 2.0 * 2048 * 1 * 2304;  // 2sbh: the layer input of full recompute
  const double rematerialised = layer_activation_bytes(derive_shapes(sc, plan)).full_stash;
  for (int64_t stage = 1; stage < 3; ++stage) {  // stages without embedding or LM head
    const MemoryTimeline t = memory_timeline(graphs[stage]);
    // pp - stage micro-batches in flight, 6 layers each; during a backward also one layer's
    // rematerialised activations.
    const double kept = static_cast<double>(4 - stage) * 6 * input;
    EXPECT_DOUBLE_EQ(t.hbm_max[cat(MemoryCategory::kActivations)], kept + rematerialised)
        << "stage " << stage;
  }
  EXPECT_GT(memory_timeline(graphs[1]).hbm_max[cat(MemoryCategory::kActivations)],
            memory_timeline(graphs[2]).hbm_max[cat(MemoryCategory::kActivations)]);
}

// ZeRO model states (Rajbhandari et al. 2020; ground-truth.md A.9): with Ψ parameters and N ranks,
// ZeRO-0 2Ψ + 2Ψ + 12Ψ, ZeRO-1 2Ψ + 2Ψ + 12Ψ/N, ZeRO-2 2Ψ + 14Ψ/N, ZeRO-3 16Ψ/N.
TEST(ModelStateMemory, GraphAllocationsFollowTheZeroFormulas) {
  const double n = 8;
  for (int stage = 0; stage <= 3; ++stage) {
    testing::PlanSpec spec;
    spec.dp = 8;
    spec.zero = stage;
    const config::Scenario sc = testing::make_scenario("llama3-8b", 8, 1, spec);
    const ParallelPlan plan = make_plan(sc);
    const Graph g = build_rank_graph(sc, plan, 0);
    const MemoryTimeline t = memory_timeline(g);
    const double psi = 8030261248.0;  // Llama 3 8B
    const double weights = stage >= 3 ? 2 * psi / n : 2 * psi;
    const double grads = stage >= 2 ? 2 * psi / n : 2 * psi;
    const double optimizer = stage >= 1 ? 12 * psi / n : 12 * psi;
    EXPECT_DOUBLE_EQ(t.hbm_max[cat(MemoryCategory::kWeights)], weights) << "ZeRO-" << stage;
    EXPECT_DOUBLE_EQ(t.hbm_max[cat(MemoryCategory::kGradients)], grads) << "ZeRO-" << stage;
    EXPECT_DOUBLE_EQ(t.hbm_max[cat(MemoryCategory::kOptimizer)], optimizer) << "ZeRO-" << stage;
  }
}

// FP8 training casts the bf16 weights of the linear layers into FP8 copies, row- and column-wise (2
// bytes per weight, held as buffers); with FP8 primary weights (training.fp8_params) those weights are
// the FP8 ones, 1 byte each, and only the transposes are extra.
TEST(ModelStateMemory, Fp8PrimaryWeightsReplaceTheBf16WeightsOfTheLinearLayers) {
  testing::PlanSpec spec;
  spec.dp = 8;
  spec.zero = 1;
  config::Scenario sc = testing::make_scenario("llama3-8b", 8, 1, spec);
  sc.training.dtype = config::Dtype::kFp8;
  const ParallelPlan plan = make_plan(sc);
  const double linear = 32.0 * static_cast<double>(layer_params(derive_shapes(sc, plan)).linear_weights());
  const auto setup_bytes = [&](MemoryCategory category) {
    return testing::sum_bytes(build_rank_graph(sc, plan, 0), [category](const Op& op) {
      return op.kind == OpKind::kAlloc && op.phase == Phase::kSetup && op.label == OpLabel::kModelState &&
             op.buffer.category == category;
    });
  };
  const double bf16_weights = setup_bytes(MemoryCategory::kWeights);
  EXPECT_DOUBLE_EQ(setup_bytes(MemoryCategory::kBuffers), 2 * linear);
  sc.training.fp8_params = true;
  EXPECT_DOUBLE_EQ(bf16_weights - setup_bytes(MemoryCategory::kWeights), linear);
  EXPECT_DOUBLE_EQ(setup_bytes(MemoryCategory::kBuffers), linear);
}

RankShapes state_shapes(int zero_stage, int grad_bytes, bool master_weight_shards = false) {
  RankShapes s;
  s.act_bytes = 2;
  s.grad_bytes = grad_bytes;
  s.zero_stage = zero_stage;
  s.master_weight_shards = master_weight_shards;
  return s;
}

// ZeRO Fig. 1 (Ψ = 7.5B, N_d = 64, mixed-precision Adam: K = 12): 120 GB, 31.4 GB, 16.6 GB, 1.9 GB per GPU.
TEST(ModelStateBytes, ReproducesTheZeroPaperExample) {
  const int64_t psi = 7'500'000'000;
  const double expected[] = {120, 31.4, 16.6, 1.9};
  for (int stage = 0; stage <= 3; ++stage) {
    const ModelStateBytes m = model_state_bytes(state_shapes(stage, 2), config::Optimizer::kAdam, psi, 64);
    EXPECT_NEAR((m.weights + m.gradients + m.optimizer) / 1e9, expected[stage], 0.05) << "ZeRO-" << stage;
  }
  const ModelStateBytes z2 = model_state_bytes(state_shapes(2, 2), config::Optimizer::kAdam, psi, 64);
  EXPECT_DOUBLE_EQ(z2.weights, 2.0 * psi);
  EXPECT_DOUBLE_EQ(z2.gradients + z2.optimizer, 14.0 * psi / 64);
}

// Megatron-LM's docs/source/distrib_optimizer.md: bf16 parameters with fp32 gradients take 18 bytes
// per parameter without the distributed optimizer, 6 + 12/d with it (ZeRO-1 here).
TEST(ModelStateBytes, Fp32GradientsAsMegatronCountsThem) {
  const int64_t psi = 1'000'000'000;
  const auto total = [&](int stage) {
    const ModelStateBytes m = model_state_bytes(state_shapes(stage, 4), config::Optimizer::kAdam, psi, 8);
    return m.weights + m.gradients + m.optimizer;
  };
  EXPECT_DOUBLE_EQ(total(0), 18.0 * psi);
  EXPECT_DOUBLE_EQ(total(1), (6 + 12.0 / 8) * psi);
}

// FSDP2's shards are the fp32 master weights: 4 + 4 + 8 = 16 bytes per parameter over N with fp32
// gradients, where ZeRO-3 keeps a bf16 shard beside the master copy (18); the gathers move bf16 either way.
TEST(ModelStateBytes, Fsdp2ShardsAreTheMasterWeights) {
  const int64_t psi = 8'000'000'000;
  const ModelStateBytes fsdp2 = model_state_bytes(state_shapes(3, 4, true), config::Optimizer::kAdam, psi, 8);
  EXPECT_DOUBLE_EQ(fsdp2.weights, 4.0 * psi / 8);
  EXPECT_DOUBLE_EQ(fsdp2.gradients, 4.0 * psi / 8);
  EXPECT_DOUBLE_EQ(fsdp2.optimizer, 8.0 * psi / 8);
  const ModelStateBytes zero3 = model_state_bytes(state_shapes(3, 4), config::Optimizer::kAdam, psi, 8);
  EXPECT_DOUBLE_EQ(zero3.weights + zero3.gradients + zero3.optimizer, 18.0 * psi / 8);

  testing::PlanSpec spec;
  spec.dp = 8;
  spec.zero = 3;
  config::Scenario sc = testing::make_scenario("llama3-8b", 8, 1, spec);
  sc.framework = config::Framework::kTorchtitan;
  EXPECT_TRUE(sc.master_weight_shards());
  sc.parallelism.zero_stage = 0;
  EXPECT_FALSE(sc.master_weight_shards());  // replicated: bf16 weights beside the optimizer's master copy
  sc.parallelism.zero_stage = 3;
  sc.training.dtype = config::Dtype::kFp32;
  EXPECT_FALSE(sc.master_weight_shards());  // no separate master copy to fold
  sc.training.dtype = config::Dtype::kBf16;
  sc.framework = config::Framework::kDeepSpeed;
  EXPECT_FALSE(sc.master_weight_shards());
}

// The bytes the optimizer step moves per parameter, pass by pass (config/framework.cc): the generic
// fused step 2K + g + e; Megatron-LM with bf16 adds the norm's read of the fp32 main gradients and
// the master copy's read for the weights (38); with fp16 also the conversion of the fp16 gradients to
// fp32 (2 + 4) and the unscale (4 + 4): 52; torchtitan reads the fp32 gradients for the norm and
// scales them in place (2K + 4 + 4 + 8), writing no separate weights.
TEST(ModelStateBytes, OptimizerStepPassesAsEachFrameworkMakesThem) {
  testing::PlanSpec spec;
  spec.dp = 8;
  const auto step_bytes = [&](config::Framework framework, config::Dtype dtype, int zero) {
    spec.zero = zero;
    config::Scenario sc = testing::make_scenario("llama3-8b", 8, 1, spec);
    sc.framework = framework;
    sc.training.dtype = dtype;
    const RankShapes s = derive_shapes(sc, make_plan(sc));
    return model_state_bytes(s, config::Optimizer::kAdam, 1000, 8).step_bytes_per_param;
  };
  using config::Dtype;
  using config::Framework;
  EXPECT_EQ(step_bytes(Framework::kGeneric, Dtype::kBf16, 0), 24 + 2 + 2);
  EXPECT_EQ(step_bytes(Framework::kMegatronLm, Dtype::kBf16, 0), 38);
  EXPECT_EQ(step_bytes(Framework::kMegatronLm, Dtype::kFp16, 0), 52);
  EXPECT_EQ(step_bytes(Framework::kDeepSpeed, Dtype::kFp16, 1), 52);
  EXPECT_EQ(step_bytes(Framework::kDeepSpeed, Dtype::kBf16, 1), 24 + 4 + (2 + 4) + 4 + (4 + 2));
  EXPECT_EQ(step_bytes(Framework::kTorchtitan, Dtype::kBf16, 3), 24 + 4 + 4 + 8);
}

// fp32 gradients (Megatron's main gradients): twice the gradient memory and twice the bytes the
// data-parallel reduction moves, the weights and optimizer unchanged.
TEST(ModelStateMemory, GradientDtypeSetsGradientMemoryAndReductionBytes) {
  testing::PlanSpec spec;
  spec.dp = 8;
  spec.zero = 1;
  config::Scenario sc = testing::make_scenario("llama3-8b", 8, 1, spec);
  sc.model.layers = 2;
  const auto measure = [&sc] {
    const Graph g = build_rank_graph(sc, make_plan(sc), 0);
    const MemoryTimeline t = memory_timeline(g);
    const double reduced = testing::sum_bytes(g, [](const Op& op) { return op.label == OpLabel::kGradSync; });
    return std::array<double, 3>{t.hbm_max[cat(MemoryCategory::kGradients)],
                                 t.hbm_max[cat(MemoryCategory::kOptimizer)], reduced};
  };
  const std::array<double, 3> bf16 = measure();
  sc.training.grad_dtype = config::Dtype::kFp32;
  const std::array<double, 3> fp32 = measure();
  EXPECT_DOUBLE_EQ(fp32[0], 2 * bf16[0]);
  EXPECT_DOUBLE_EQ(fp32[1], bf16[1]);
  EXPECT_GT(bf16[2], 0);
  EXPECT_DOUBLE_EQ(fp32[2], 2 * bf16[2]);
}

// seed-papers.md A9: Llama-3-8B, 2M tokens, 4 GPUs, 64K chunks (u = 32), offload and CPU
// checkpointing as in the FPDT recipes.
TEST(FpdtMemory, GraphMatchesTheWorkedExample) {
  testing::PlanSpec spec;
  spec.sp = 4;
  spec.sequence = SequenceParallel::kFpdt;
  spec.zero = 3;
  spec.recompute = Recompute::kFull;
  config::Scenario sc = testing::make_scenario("llama3-8b", 1, 1, spec);
  sc.model.seq_len = 2 * 1024 * 1024;
  sc.parallelism.fpdt.chunk_tokens = 65536;
  sc.parallelism.fpdt.offload = true;
  sc.parallelism.cpu_checkpointing = true;
  sc.cluster.topology.node.gpus = 4;
  const ParallelPlan plan = make_plan(sc);
  const Graph g = build_rank_graph(sc, plan, 0);
  const auto allocates = [&g](MemorySpace space, double bytes) {
    return testing::count_ops(g, [&](const Op& op) {
             return op.kind == OpKind::kAlloc && op.buffer.space == space && op.bytes == bytes;
           }) > 0;
  };
  EXPECT_TRUE(allocates(MemorySpace::kHbm, 128 * kMiB)) << "q chunk";
  EXPECT_TRUE(allocates(MemorySpace::kHbm, 32 * kMiB)) << "k/v chunk";
  EXPECT_TRUE(allocates(MemorySpace::kHbm, 256 * kMiB)) << "fp32 output accumulator";
  EXPECT_TRUE(allocates(MemorySpace::kHost, 128 * kMiB)) << "x local chunk";
  EXPECT_TRUE(allocates(MemorySpace::kHbm, 4 * kGiB)) << "an O(S/P) tensor";

  // Host: 32 CPU checkpoints of 4 GiB, plus the live layer's x, q, k, v, o, lse (A9's ~22 GiB
  // with dq) and fp32 dq of chunks 1..31 -- and the dO chunks DeepSpeed also offloads (4 GiB),
  // which A9 leaves out.
  const double live_layer = 4 * kGiB + 4 * kGiB + 2 * kGiB + 4 * kGiB + 64 * kMiB + 31.0 / 32 * 8 * kGiB;
  const MemoryTimeline t = memory_timeline(g);
  EXPECT_DOUBLE_EQ(t.peak_host_bytes, 32 * 4 * kGiB + live_layer + 4 * kGiB);
  EXPECT_NEAR(live_layer / kGiB, 22, 0.5);
  const analytic::FpdtMemory f = analytic::fpdt_memory(sc);
  EXPECT_DOUBLE_EQ(f.host_per_live_layer_bytes, live_layer);
  EXPECT_DOUBLE_EQ(f.host_checkpoint_bytes, 128 * kGiB);
  // A9: "~0.6 TB per 4-GPU node".
  EXPECT_NEAR(peak_host_bytes_per_node(plan, {t.peak_host_bytes}, 4) / 1e12, 0.66, 0.05);
  // HBM: the K/V working set never exceeds 3 chunk pairs (A7), and 2M tokens fit an 80 GB A100.
  EXPECT_LT(t.peak_hbm_bytes, 80e9);
}

TEST(MemoryTimeline, PeakAndCategoriesFollowProgramOrder) {
  Graph g;
  g.info.buffers = 3;
  const auto alloc = [&g](BufferId id, MemorySpace space, MemoryCategory c, double bytes, bool free) {
    Op op;
    op.kind = free ? OpKind::kFree : OpKind::kAlloc;
    op.buffer = {id, space, c};
    op.bytes = bytes;
    g.add(op, {});
  };
  alloc(0, MemorySpace::kHbm, MemoryCategory::kWeights, 10, false);
  alloc(1, MemorySpace::kHbm, MemoryCategory::kActivations, 5, false);
  alloc(1, MemorySpace::kHbm, MemoryCategory::kActivations, 5, true);
  alloc(2, MemorySpace::kHost, MemoryCategory::kActivations, 7, false);
  alloc(2, MemorySpace::kHost, MemoryCategory::kActivations, 7, true);
  alloc(0, MemorySpace::kHbm, MemoryCategory::kWeights, 10, true);
  const MemoryTimeline t = memory_timeline(g);
  EXPECT_EQ(t.peak_hbm_bytes, 15);
  EXPECT_EQ(t.hbm_at_peak[cat(MemoryCategory::kActivations)], 5);
  EXPECT_EQ(t.hbm_peak_op, 1u);
  EXPECT_EQ(t.peak_host_bytes, 7);
}

// Zero bubble: stage s holds back s W passes; each keeps, per layer, what its weight gradients read
// (the inputs and output gradients of the four GEMMs) while the rest of the micro-batch's stash is
// freed by its B pass. So stage s's peak exceeds 1F1B's by s x layers x those operands, and stage
// 0, which holds back nothing, peaks as under 1F1B.
TEST(ActivationMemory, ZeroBubbleStagesKeepTheWeightGradientOperandsOfTheirHeldBackPasses) {
  const auto activation_peaks = [](config::Schedule schedule) {
    testing::PlanSpec spec;
    spec.tp = 2;
    spec.pp = 4;
    spec.recompute = Recompute::kSelective;
    spec.schedule = schedule;
    const config::Scenario sc = testing::make_scenario("megatron-1.7b", 8, 1, spec);
    std::vector<double> peaks;
    for (const Graph& g : build_class_graphs(sc, make_plan(sc))) {
      peaks.push_back(memory_timeline(g).hbm_max[cat(MemoryCategory::kActivations)]);
    }
    return peaks;
  };
  const std::vector<double> one_f_one_b = activation_peaks(config::Schedule::kOneFOneB);
  const std::vector<double> zero_bubble = activation_peaks(config::Schedule::kZeroBubble);
  ASSERT_EQ(zero_bubble.size(), 4u);
  // megatron-1.7b, s = 2048, b = 1, tp 2: the QKV and FC1 inputs (2sbh each), the projection and FC2
  // output gradients (2sbh each), the projection input (2sb x 1152), the FC2 input (2sb x 4608), the
  // QKV and FC1 output gradients (2sb x 3456, 2sb x 4608).
  const double sb = 2048, h = 2304;
  const double operands = 2 * sb * (4 * h + 1152 + 4608 + 3456 + 4608);
  const int layers_per_stage = 6;
  for (size_t stage = 0; stage < 4; ++stage) {
    EXPECT_NEAR(zero_bubble[stage] - one_f_one_b[stage],
                static_cast<double>(stage) * layers_per_stage * operands, 1e-9 * one_f_one_b[stage])
        << "stage " << stage;
  }
}

}  // namespace
}  // namespace trainsim::workload
