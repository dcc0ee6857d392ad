// Multi-head latent attention's graph: down projections on the rank's own tokens with replicated
// weights, latents gathered over TP under sequence parallelism (reduced in the backward), attention
// kernels with query/key heads of head_dim + rope_head_dim and value heads of v_head_dim.
#include <gtest/gtest.h>

#include "sim/cost/compute_model.h"
#include "sim/workload/builder.h"
#include "sim/workload/layout.h"
#include "sim/workload/shapes.h"
#include "tests/workload/workload_test_util.h"

namespace trainsim::workload {
namespace {

// DeepSeek-V2's attention (128 heads, query latent 1536, key/value latent 512 + rotary key 64) on a
// dense model of 2 layers of 1Ki tokens, on tp 4 with or without Megatron-SP.
config::Scenario deepseek_v2(config::SequenceParallel sequence) {
  testing::PlanSpec spec;
  spec.tp = 4;
  spec.sequence = sequence;
  config::Scenario s = testing::make_scenario("deepseek-v2", 1, 1, spec);
  s.model.moe = {};
  s.model.layers = 2;
  s.model.seq_len = 1024;
  return s;
}

bool tp_collective(const Op& op, CollectiveKind kind, Phase phase, double bytes) {
  return op.kind == OpKind::kCollective && op.collective.group.kind == GroupKind::kTp &&
         op.collective.kind == kind && op.phase == phase && op.bytes == bytes;
}

// Down-projection GEMMs of `pass` over `rows` tokens (the weight gradient's reduction dimension).
int64_t down_projections(const Graph& g, GemmPass pass, int64_t rows, double model_share) {
  return testing::count_ops(g, [&](const Op& op) {
    const int64_t tokens = pass == GemmPass::kWeightGrad ? op.gemm.k : op.gemm.m;
    return op.kind == OpKind::kGemm && op.label == OpLabel::kLatent && op.gemm.pass == pass &&
           tokens == rows && op.model_flops == op.flops * model_share;
  });
}

TEST(MlaLayer, SequenceParallelismGathersTheLatentsInsteadOfTheHiddenState) {
  const config::Scenario s = deepseek_v2(config::SequenceParallel::kMegatron);
  const Graph g = build_rank_graph(s, make_plan(s), 0);
  const double hidden = 2.0 * 1024 * 5120, q_latent = 2.0 * 1024 * 1536, kv_latent = 2.0 * 1024 * (512 + 64);
  for (const double latent : {q_latent, kv_latent}) {
    const auto count = [&](CollectiveKind kind, Phase phase) {
      return testing::count_ops(g, [&](const Op& op) { return tp_collective(op, kind, phase, latent); });
    };
    EXPECT_EQ(count(CollectiveKind::kAllGather, Phase::kForward), 2);       // before each up projection
    EXPECT_EQ(count(CollectiveKind::kAllGather, Phase::kBackward), 2);      // again for its weight gradient
    EXPECT_EQ(count(CollectiveKind::kReduceScatter, Phase::kBackward), 2);  // its input gradient
  }
  // Forward, the hidden state is gathered only in front of each MLP and of the LM head.
  EXPECT_EQ(testing::count_ops(g,
                               [&](const Op& op) {
                                 return tp_collective(op, CollectiveKind::kAllGather, Phase::kForward,
                                                      hidden);
                               }),
            2 + 1);
  // The down projections run on the rank's 256 tokens, and are all model FLOPs.
  EXPECT_EQ(down_projections(g, GemmPass::kForward, 256, 1.0), 2 * 2);
  EXPECT_EQ(down_projections(g, GemmPass::kInputGrad, 256, 1.0), 2 * 2);
  EXPECT_EQ(down_projections(g, GemmPass::kWeightGrad, 256, 1.0), 2 * 2);
}

TEST(MlaLayer, WithoutSequenceParallelismEveryTpRankProjectsEveryTokenDown) {
  const config::Scenario s = deepseek_v2(config::SequenceParallel::kNone);
  const Graph g = build_rank_graph(s, make_plan(s), 0);
  // 4 ranks compute the same latents: each counts a quarter as model FLOPs.
  EXPECT_EQ(down_projections(g, GemmPass::kForward, 1024, 0.25), 2 * 2);
  EXPECT_EQ(down_projections(g, GemmPass::kWeightGrad, 1024, 0.25), 2 * 2);
  // Each rank's heads contribute to every latent's gradient: all-reduced, and nothing gathered.
  for (const double latent : {2.0 * 1024 * 1536, 2.0 * 1024 * 576}) {
    EXPECT_EQ(testing::count_ops(g,
                                 [&](const Op& op) {
                                   return tp_collective(op, CollectiveKind::kAllReduce, Phase::kBackward,
                                                        latent);
                                 }),
              2);
  }
  EXPECT_EQ(testing::count_ops(g,
                               [](const Op& op) {
                                 return op.kind == OpKind::kCollective &&
                                        op.collective.kind == CollectiveKind::kAllGather &&
                                        op.collective.group.kind == GroupKind::kTp;
                               }),
            0);
}

TEST(MlaLayer, AttentionKernelsUseTheQueryKeyAndValueHeadSizes) {
  const config::Scenario s = deepseek_v2(config::SequenceParallel::kMegatron);
  const ParallelPlan plan = make_plan(s);
  const RankShapes shapes = derive_shapes(s, plan);
  EXPECT_EQ(shapes.q_width(), 32 * 192);
  EXPECT_EQ(shapes.kv_width(), 32 * (192 + 128));
  EXPECT_EQ(shapes.attn_out_width(), 32 * 128);
  // Per rank: the up projections, the output projection and the replicated down projections.
  const LayerParams p = layer_params(shapes);
  EXPECT_EQ(p.qkv_weight, 1536 * 32 * 192 + 512 * 32 * 256);
  EXPECT_EQ(p.proj_weight, 32 * 128 * 5120);
  EXPECT_EQ(p.latent, 5120 * (1536 + 576));
  EXPECT_EQ(p.norms, 2 * 5120 + 1536 + 512);
  const Graph g = build_rank_graph(s, plan, 0);
  int64_t kernels = 0;
  for (const Op& op : g.ops()) {
    if (op.kind != OpKind::kAttentionForward) continue;
    ++kernels;
    EXPECT_EQ(op.attention.head_dim, 192);
    EXPECT_EQ(op.attention.value_dim, 128);
    // Causal: half of QK^T (192) and PV (128) over 32 heads and 1024 x 1024 positions.
    EXPECT_DOUBLE_EQ(op.flops, 2.0 * 32 * 1024 * 1024 * (192 + 128) / 2);
    const cost::AttentionCall call{
        config::AttentionPass::kForward, true, config::Dtype::kBf16, 1, 32, 32, 1024, 1024, 192, 128};
    EXPECT_DOUBLE_EQ(cost::attention_flops(call), 2.0 * 32 * (192 + 128) * (1024 * 1025 / 2));  // diagonal in
  }
  EXPECT_EQ(kernels, 2);
}

}  // namespace
}  // namespace trainsim::workload
