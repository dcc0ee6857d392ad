// The MoE layer's graph: token all-to-alls over the expert group, grouped expert GEMMs sized by the
// capacity factor, expert gradients and optimizer states on the expert-data-parallel group.
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "sim/workload/builder.h"
#include "sim/workload/layout.h"
#include "sim/workload/shapes.h"
#include "tests/workload/workload_test_util.h"

namespace trainsim::workload {
namespace {

// `preset` cut to 2 layers of 1Ki tokens, one sequence per data-parallel rank.
config::Scenario two_layers(std::string_view preset, const testing::PlanSpec& spec) {
  config::Scenario s = testing::make_scenario(preset, spec.dp, 1, spec);
  s.model.layers = 2;
  s.model.seq_len = 1024;
  return s;
}

// Mixtral 8x7B on dp `dp` with expert parallelism `ep`.
config::Scenario mixtral(int64_t dp, int64_t ep, int zero = 0) {
  testing::PlanSpec spec;
  spec.dp = dp;
  spec.ep = ep;
  spec.zero = zero;
  return two_layers("mixtral-8x7b", spec);
}

// The forward FC1 GEMMs of the routed experts in `graph`.
std::vector<const Op*> expert_fc1_forward(const Graph& graph) {
  std::vector<const Op*> out;
  for (const Op& op : graph.ops()) {
    if (op.kind == OpKind::kGemm && op.label == OpLabel::kExpertFc1 && op.gemm.pass == GemmPass::kForward)
      out.push_back(&op);
  }
  return out;
}

bool on(const Op& op, GroupKind group, CollectiveKind kind) {
  return op.kind == OpKind::kCollective && op.collective.group.kind == group && op.collective.kind == kind;
}

TEST(MoeLayer, DispatchesAndCombinesOverTheExpertGroup) {
  config::Scenario s = mixtral(4, 4);
  s.model.moe.capacity_factor = 1.25;
  const ParallelPlan plan = make_plan(s);
  const Graph g = build_rank_graph(s, plan, 0);
  const double dispatch = 2.0 * 1024 * 2 * 1.25 * 4096;  // e * tokens * top_k * capacity * hidden
  for (const Phase phase : {Phase::kForward, Phase::kBackward}) {
    EXPECT_EQ(testing::count_ops(g,
                                 [&](const Op& op) {
                                   return op.phase == phase &&
                                          on(op, GroupKind::kEp, CollectiveKind::kAllToAll) &&
                                          op.bytes == dispatch;
                                 }),
              2 * 2);
  }
  // Each rank runs its 2 experts as grouped GEMMs of 1024 * 2 * 1.25 * 4 / 8 = 1280 rows each.
  const std::vector<const Op*> grouped = expert_fc1_forward(g);
  EXPECT_EQ(grouped.size(), 2u);
  for (const Op* op : grouped) {
    EXPECT_EQ(op->gemm.groups, 2);
    EXPECT_EQ(op->gemm.m, 1280);
    EXPECT_EQ(op->gemm.n, 2 * 14336);
    EXPECT_DOUBLE_EQ(op->model_flops, op->flops / 1.25);
  }
  // Without expert parallelism there is no token exchange, and every expert is local.
  const config::Scenario local = mixtral(4, 1);
  const Graph l = build_rank_graph(local, make_plan(local), 0);
  EXPECT_EQ(testing::count_ops(l, [](const Op& op) { return op.label == OpLabel::kEpComm; }), 0);
}

// With moe_host_sync each MoE layer's forward holds the host until the router is done, before the
// permutation and the dispatch; the backward reuses the split sizes and never waits.
TEST(MoeLayer, ADroplessDispatcherWaitsOnTheHostForTheRoutersCounts) {
  config::Scenario s = mixtral(4, 4);
  s.parallelism.moe_host_sync = true;
  const Graph g = build_rank_graph(s, make_plan(s), 0);
  const auto syncs = [](const Graph& graph) {
    return testing::count_ops(graph, [](const Op& op) { return op.kind == OpKind::kHostSync; });
  };
  EXPECT_EQ(syncs(g), 2);  // 2 layers, 1 micro-batch, forward only
  for (OpId id = 0; id < g.size(); ++id) {
    const Op& op = g.op(id);
    if (op.kind != OpKind::kHostSync) continue;
    EXPECT_EQ(op.label, OpLabel::kRouter);
    EXPECT_EQ(op.phase, Phase::kForward);
    // It waits for the router's softmax and top-k; the permutation and the dispatch wait for it.
    const auto preds = g.predecessors(id);
    ASSERT_EQ(preds.size(), 1u);
    EXPECT_EQ(g.op(preds[0]).label, OpLabel::kRouter);
    EXPECT_EQ(g.op(id + 1).label, OpLabel::kPermute);
  }
  // Under full recomputation the replayed forward waits again.
  s.parallelism.recompute = config::Recompute::kFull;
  EXPECT_EQ(syncs(build_rank_graph(s, make_plan(s), 0)), 4);
  s.parallelism.moe_host_sync = false;
  EXPECT_EQ(syncs(build_rank_graph(s, make_plan(s), 0)), 0);
}

// Qwen3-30B-A3B under TP + SP, with MoE parallel folding.
config::Scenario folded_qwen(int64_t tp, int64_t dp, int64_t ep, int64_t expert_tp) {
  testing::PlanSpec spec;
  spec.tp = tp;
  spec.dp = dp;
  spec.ep = ep;
  spec.expert_tp = expert_tp;
  spec.sequence = config::SequenceParallel::kMegatron;
  return two_layers("qwen3-30b-a3b", spec);
}

TEST(MoeLayer, FoldedExpertsRunWholeOnTheirSequenceShards) {
  // expert_tp 1 on tp 2: each rank dispatches its 512 tokens over 8 ranks (both tp ranks of 4 dp
  // coordinates) and runs its 16 experts whole, 512 * 8 * 8 / 128 = 256 rows each, with no gather.
  const config::Scenario s = folded_qwen(2, 4, 8, 1);
  const Graph g = build_rank_graph(s, make_plan(s), 0);
  EXPECT_EQ(testing::count_ops(g,
                               [](const Op& op) {
                                 return op.kind == OpKind::kCollective &&
                                        op.collective.group.kind == GroupKind::kEtp;
                               }),
            0);
  EXPECT_EQ(testing::count_ops(g,
                               [](const Op& op) {
                                 return on(op, GroupKind::kEp, CollectiveKind::kAllToAll) &&
                                        op.bytes == 2.0 * 512 * 8 * 2048;
                               }),
            2 * 2 * 2);
  const std::vector<const Op*> whole = expert_fc1_forward(g);
  EXPECT_EQ(whole.size(), 2u);
  for (const Op* op : whole) {
    EXPECT_EQ(op->gemm.groups, 16);
    EXPECT_EQ(op->gemm.m, 256);
    EXPECT_EQ(op->gemm.n, 2 * 768);
  }
  // expert_tp 2 on tp 4 (ep 4: two folded tp ranks x two dp coordinates): each expert tensor-parallel
  // pair gathers its 2 x 256 tokens' share of the 32 local experts, 256 * 2 * 8 * 4 / 128 = 128 rows
  // each, and splits the experts' FFN in half.
  const config::Scenario half = folded_qwen(4, 4, 4, 2);
  const Graph h = build_rank_graph(half, make_plan(half), 0);
  for (const CollectiveKind kind : {CollectiveKind::kAllGather, CollectiveKind::kReduceScatter}) {
    EXPECT_EQ(testing::count_ops(h,
                                 [&](const Op& op) {
                                   return on(op, GroupKind::kEtp, kind) && op.bytes == 2.0 * 32 * 128 * 2048;
                                 }),
              2 * 2);
  }
  const std::vector<const Op*> split = expert_fc1_forward(h);
  EXPECT_EQ(split.size(), 2u);
  for (const Op* op : split) {
    EXPECT_EQ(op->gemm.m, 128);
    EXPECT_EQ(op->gemm.n, 768);
  }
}

TEST(MoeLayer, ExpertGradientsAndStatesLiveOnTheExpertDataParallelGroup) {
  for (const int zero : {0, 1}) {
    SCOPED_TRACE(zero);
    const config::Scenario s = mixtral(8, 4, zero);
    const ParallelPlan plan = make_plan(s);
    const RankShapes shapes = derive_shapes(s, plan);
    const StageLayout layout = partition_layers(shapes);
    const double experts = static_cast<double>(stage_expert_params(shapes, layout, 0));
    const double dense = static_cast<double>(stage_params(shapes, layout, 0)) - experts;
    EXPECT_EQ(experts, 2.0 * 2 * 3 * 4096 * 14336);  // 2 layers x 2 local experts
    const Graph g = build_rank_graph(s, plan, 0);
    const CollectiveKind reduce = zero == 0 ? CollectiveKind::kAllReduce : CollectiveKind::kReduceScatter;
    EXPECT_DOUBLE_EQ(testing::sum_bytes(g, [&](const Op& op) { return on(op, GroupKind::kEdp, reduce); }),
                     2 * experts);
    EXPECT_DOUBLE_EQ(testing::sum_bytes(g, [&](const Op& op) { return on(op, GroupKind::kDp, reduce); }),
                     2 * dense);
    // Adam's 12 bytes per parameter, sharded over dp (8) and over the 2 ranks holding the same experts.
    const double optimizer = testing::sum_bytes(g, [](const Op& op) {
      return op.kind == OpKind::kAlloc && op.buffer.category == MemoryCategory::kOptimizer;
    });
    EXPECT_DOUBLE_EQ(optimizer, zero == 0 ? 12 * (dense + experts) : 12 * (dense / 8 + experts / 2));
  }
}

}  // namespace
}  // namespace trainsim::workload
