// Ordering rules the frameworks follow: DDP buckets fire in reverse layer order during the last
// micro-batch's backward, ZeRO-3 prefetches one layer ahead, pipeline receives precede the layers
// that consume them, and FPDT's loop (seed-papers.md A4-A6) has its prefetches, syncs and dq round
// trips.
#include <numeric>

#include <gtest/gtest.h>

#include "sim/workload/builder.h"
#include "tests/workload/workload_test_util.h"

namespace trainsim::workload {
namespace {

using config::Recompute;
using config::SequenceParallel;

TEST(DataParallel, BucketsFireInReverseLayerOrderDuringTheLastBackward) {
  testing::PlanSpec spec;
  spec.dp = 4;
  config::Scenario s = testing::make_scenario("megatron-1.7b", 12, 1, spec);  // 3 micro-batches
  s.model.layers = 6;
  s.parallelism.dp_bucket_bytes = 40e6;  // about 1.5 layers of gradients
  const ParallelPlan plan = make_plan(s);
  const Graph g = build_rank_graph(s, plan, 0);
  std::vector<int32_t> producer_layers;
  for (OpId id = 0; id < g.size(); ++id) {
    const Op& op = g.op(id);
    if (op.kind != OpKind::kCollective || op.label != OpLabel::kGradSync) continue;
    EXPECT_EQ(op.phase, Phase::kBackward);
    EXPECT_EQ(op.micro_batch, 2) << "only the last micro-batch reduces";
    EXPECT_EQ(op.stream, Stream::kDpComm);
    EXPECT_EQ(op.collective.kind, CollectiveKind::kAllReduce);
    // The bucket waits for the gradient that closed it.
    const auto preds = g.predecessors(id);
    ASSERT_FALSE(preds.empty());
    producer_layers.push_back(op.layer);
  }
  ASSERT_GE(producer_layers.size(), 4u);
  EXPECT_TRUE(std::is_sorted(producer_layers.rbegin(), producer_layers.rend())) << "reverse layer order";
  // Without overlap every bucket waits for the end of the backward.
  s.parallelism.overlap_grad_reduce = false;
  const Graph late = build_rank_graph(s, plan, 0);
  for (const Op& op : late.ops()) {
    if (op.label == OpLabel::kGradSync) {
      EXPECT_EQ(op.phase, Phase::kOptimizer);
    }
  }
}

// Megatron's 1.7B GPT cut to two layers, one micro-batch, on tp 2.
config::Scenario two_layers_on_tp2() {
  testing::PlanSpec spec;
  spec.tp = 2;
  config::Scenario s = testing::make_scenario("megatron-1.7b", 1, 1, spec);
  s.model.layers = 2;
  return s;
}

// Megatron-LM 2021-22 (GPT-style models with biases): the QKV bias is its own pass over the QKV
// output (read + write), and each of the four bias gradients re-reads the gradient it reduces.
TEST(BiasPasses, QkvBiasAddAndBiasGradientReductions) {
  config::Scenario s = two_layers_on_tp2();
  const ParallelPlan plan = make_plan(s);
  const Graph biased = build_rank_graph(s, plan, 0);
  s.model.linear_bias = false;
  const Graph plain = build_rank_graph(s, plan, 0);

  const double e = 2;  // bf16
  const double rows = static_cast<double>(s.model.seq_len);
  const double qkv_width = 3.0 * s.model.hidden / 2;  // per TP rank
  const double fc1_width = static_cast<double>(s.model.ffn_hidden) / 2;
  const double hidden = static_cast<double>(s.model.hidden);
  const auto memory_bytes = [](const Graph& g, Phase phase, OpLabel label) {
    return testing::sum_bytes(g, [&](const Op& op) {
      return op.kind == OpKind::kMemory && op.phase == phase && op.label == label && op.layer == 0;
    });
  };
  EXPECT_DOUBLE_EQ(memory_bytes(biased, Phase::kForward, OpLabel::kQkv), 2 * e * rows * qkv_width);
  EXPECT_DOUBLE_EQ(memory_bytes(plain, Phase::kForward, OpLabel::kQkv), 0.0);
  EXPECT_DOUBLE_EQ(memory_bytes(biased, Phase::kBackward, OpLabel::kQkv), e * rows * qkv_width);
  EXPECT_DOUBLE_EQ(memory_bytes(biased, Phase::kBackward, OpLabel::kActivation) -
                       memory_bytes(plain, Phase::kBackward, OpLabel::kActivation),
                   e * rows * fc1_width);
  EXPECT_DOUBLE_EQ(memory_bytes(biased, Phase::kBackward, OpLabel::kResidual) -
                       memory_bytes(plain, Phase::kBackward, OpLabel::kResidual),
                   2 * e * rows * hidden);
}

// The backward all-reduce of a column-parallel GEMM's input gradient (QKV, FC1) starts after that
// GEMM's input gradient and runs beside its weight gradient (Megatron's async all-reduce), or, without
// it (Megatron-LM of 2021), starts after the weight gradient.
TEST(TensorParallel, InputGradientReductionRunsBesideOrAfterTheWeightGradient) {
  config::Scenario s = two_layers_on_tp2();
  const ParallelPlan plan = make_plan(s);
  const auto reductions_after = [&](const config::Scenario& scenario) {
    const Graph g = build_rank_graph(scenario, plan, 0);
    std::vector<std::pair<OpLabel, GemmPass>> after;
    for (OpId id = 0; id < g.size(); ++id) {
      const Op& op = g.op(id);
      if (op.kind != OpKind::kCollective || op.label != OpLabel::kTpComm || op.phase != Phase::kBackward)
        continue;
      EXPECT_EQ(op.collective.kind, CollectiveKind::kAllReduce);
      for (const OpId pred : g.predecessors(id)) {
        if (g.op(pred).kind == OpKind::kGemm) after.emplace_back(g.op(pred).label, g.op(pred).gemm.pass);
      }
    }
    return after;
  };
  using P = std::pair<OpLabel, GemmPass>;
  const std::vector<P> per_layer_async = {{OpLabel::kFc1, GemmPass::kInputGrad},
                                          {OpLabel::kQkv, GemmPass::kInputGrad}};
  const std::vector<P> per_layer_sync = {{OpLabel::kFc1, GemmPass::kWeightGrad},
                                         {OpLabel::kQkv, GemmPass::kWeightGrad}};
  const auto twice = [](std::vector<P> v) {
    v.insert(v.end(), v.begin(), v.end());
    return v;
  };
  EXPECT_EQ(reductions_after(s), twice(per_layer_async));
  s.parallelism.async_tp_reduce = false;
  EXPECT_EQ(reductions_after(s), twice(per_layer_sync));
}

TEST(ZeroThree, GathersEachLayerOneAheadInForwardAndBackward) {
  testing::PlanSpec spec;
  spec.dp = 4;
  spec.zero = 3;
  config::Scenario s = testing::make_scenario("llama2-7b", 4, 1, spec);
  s.model.layers = 3;
  const ParallelPlan plan = make_plan(s);
  const Graph g = build_rank_graph(s, plan, 0);
  // Units in execution order: embedding, 3 layers, head, then head, 3 layers, embedding.
  int64_t gathers = 0, scatters = 0;
  OpId first_layer_compute = kNoOp;
  OpId second_gather = kNoOp, third_gather = kNoOp;
  for (OpId id = 0; id < g.size(); ++id) {
    const Op& op = g.op(id);
    if (op.kind == OpKind::kCollective && op.label == OpLabel::kParamGather) {
      ++gathers;
      if (gathers == 2) second_gather = id;
      if (gathers == 3) third_gather = id;
    }
    if (op.kind == OpKind::kCollective && op.collective.kind == CollectiveKind::kReduceScatter) ++scatters;
    if (op.kind == OpKind::kGemm && op.layer == 0 && op.phase == Phase::kForward &&
        first_layer_compute == kNoOp) {
      first_layer_compute = id;
    }
  }
  EXPECT_EQ(gathers, 10);
  EXPECT_EQ(scatters, 5);
  // Layer 0's parameters (gather 2) were prefetched while the embedding ran; layer 1's (gather 3)
  // are issued before layer 0 computes.
  EXPECT_LT(second_gather, first_layer_compute);
  EXPECT_LT(third_gather, first_layer_compute);
}

TEST(Pipeline, ReceivesPrecedeTheirConsumers) {
  testing::PlanSpec spec;
  spec.pp = 2;
  config::Scenario s = testing::make_scenario("gpt-neox-125m", 4, 1, spec);
  s.model.layers = 2;
  const ParallelPlan plan = make_plan(s);
  const Graph g = build_rank_graph(s, plan, 1);
  const Graph::Successors succ = g.successors();
  for (OpId id = 0; id < g.size(); ++id) {
    const Op& op = g.op(id);
    if (op.kind != OpKind::kRecv) continue;
    EXPECT_EQ(op.stream, Stream::kP2p);
    bool feeds_compute = false;
    for (OpId next : succ.of(id)) feeds_compute = feeds_compute || g.op(next).stream == Stream::kCompute;
    EXPECT_TRUE(feeds_compute) << op_name(op);
  }
}

// DeepSpeed's throughput timer synchronises the device as each micro-batch's forward starts: the
// host waits for the activation it received and for the gradient it sent after the backward before
// (a pipeline send completes only when the other stage receives it). Megatron-LM does not.
TEST(Pipeline, DeepSpeedSynchronisesTheDeviceBeforeEachForward) {
  testing::PlanSpec spec;
  spec.pp = 2;
  config::Scenario s = testing::make_scenario("gpt-neox-125m", 4, 1, spec);  // 4 micro-batches
  s.model.layers = 2;
  s.framework = config::Framework::kMegatronDeepSpeed;
  const ParallelPlan plan = make_plan(s);
  const Graph g = build_rank_graph(s, plan, 1);
  const auto is_step_sync = [](const Op& op) {
    return op.kind == OpKind::kHostSync && op.label == OpLabel::kStepSync;
  };
  EXPECT_EQ(testing::count_ops(g, is_step_sync), 4);
  for (OpId id = 0; id < g.size(); ++id) {
    if (!is_step_sync(g.op(id))) continue;
    // Everything it waits for, transitively.
    std::vector<bool> before(static_cast<size_t>(id), false);
    std::vector<OpId> frontier = {id};
    while (!frontier.empty()) {
      const OpId at = frontier.back();
      frontier.pop_back();
      for (const OpId p : g.predecessors(at)) {
        if (!before[static_cast<size_t>(p)]) {
          before[static_cast<size_t>(p)] = true;
          frontier.push_back(p);
        }
      }
    }
    for (OpId p = 0; p < id; ++p) {
      const Op& op = g.op(p);
      if (op.kind == OpKind::kSend || op.kind == OpKind::kRecv) {
        EXPECT_TRUE(before[static_cast<size_t>(p)]) << op_name(op) << " before " << op_name(g.op(id));
      }
    }
    // The forward it precedes is that of the micro-batch whose activation it waited for.
    const OpId next = id + 1;
    ASSERT_LT(next, g.size());
    EXPECT_EQ(g.op(next).phase, Phase::kForward);
  }
  s.framework = config::Framework::kMegatronLm;
  EXPECT_EQ(testing::count_ops(build_rank_graph(s, plan, 1), is_step_sync), 0);
  s.parallelism.micro_batch_sync = true;
  EXPECT_EQ(testing::count_ops(build_rank_graph(s, plan, 1), is_step_sync), 4);
}

// Zero bubble moves the weight-gradient GEMMs, not the work: the same GEMMs and FLOPs as 1F1B; the
// last stage's first W pass (micro-batch 0) waits until the B pass of micro-batch 1; gradient
// buckets wait for weight-gradient GEMMs.
TEST(ZeroBubble, MovesTheWeightGradientsAndReducesAfterThem) {
  testing::PlanSpec spec;
  spec.pp = 2;
  spec.dp = 2;
  config::Scenario s = testing::make_scenario("gpt-neox-125m", 8, 1, spec);  // 4 micro-batches
  s.model.layers = 4;
  s.parallelism.dp_bucket_bytes = 4e6;
  const ParallelPlan plan = make_plan(s);
  const Graph one_f_one_b = build_rank_graph(s, plan, 2);  // stage 1 (pp is the outer axis)
  ASSERT_EQ(one_f_one_b.info.coords.pp(), 1);
  s.parallelism.schedule = config::Schedule::kZeroBubble;
  const Graph g = build_rank_graph(s, plan, 2);
  const auto flops = [](const Graph& graph) {
    return std::accumulate(graph.ops().begin(), graph.ops().end(), 0.0,
                           [](double sum, const Op& op) { return sum + op.flops; });
  };
  EXPECT_DOUBLE_EQ(flops(g), flops(one_f_one_b));
  const auto gemms = [](const Op& op) { return op.kind == OpKind::kGemm; };
  EXPECT_EQ(testing::count_ops(g, gemms), testing::count_ops(one_f_one_b, gemms));

  const auto is_pass = [&](OpId id, GemmPass pass, int32_t micro_batch) {
    const Op& op = g.op(id);
    return op.kind == OpKind::kGemm && op.gemm.pass == pass && op.micro_batch == micro_batch;
  };
  OpId first_w = 0, first_b1 = 0;
  while (first_w < g.size() && !is_pass(first_w, GemmPass::kWeightGrad, 0)) ++first_w;
  while (first_b1 < g.size() && !is_pass(first_b1, GemmPass::kInputGrad, 1)) ++first_b1;
  ASSERT_LT(first_w, g.size());
  EXPECT_LT(first_b1, first_w);
  int buckets = 0;
  for (OpId id = 0; id < g.size(); ++id) {
    const Op& op = g.op(id);
    if (op.label != OpLabel::kGradSync) continue;
    ++buckets;
    EXPECT_EQ(op.micro_batch, 3) << "only the last micro-batch reduces";
    bool after_weight_grad = false;
    for (const OpId pred : g.predecessors(id)) {
      const Op& p = g.op(pred);
      after_weight_grad =
          after_weight_grad || (p.kind == OpKind::kGemm && p.gemm.pass == GemmPass::kWeightGrad);
    }
    EXPECT_TRUE(after_weight_grad) << op_name(op);
  }
  EXPECT_GE(buckets, 2);
}

TEST(Fpdt, OffloadLoopPrefetchesSyncsAndRoundTripsDq) {
  testing::PlanSpec spec;
  spec.sp = 4;
  spec.sequence = SequenceParallel::kFpdt;
  config::Scenario s = testing::make_scenario("llama3-8b", 1, 1, spec);
  s.model.layers = 1;
  s.model.seq_len = 65536;
  s.parallelism.fpdt.chunk_tokens = 8192;  // u = 8
  const int64_t u = 8;
  const ParallelPlan plan = make_plan(s);
  const Graph g = build_rank_graph(s, plan, 0);
  const double kv_chunk = 2.0 * 8192 * 2 * 128, dq_chunk = 4.0 * 8192 * 8 * 128;
  const auto count = [&g](Phase phase, auto pred) {
    return testing::count_ops(g,
                              [&](const Op& op) { return op.phase == phase && op.layer == 0 && pred(op); });
  };
  const auto h2d = [](double bytes) {
    return [bytes](const Op& op) {
      return op.kind == OpKind::kCopy && op.copy.direction == CopyDirection::kHostToDevice &&
             op.bytes == bytes;
    };
  };
  // Forward: K and V of every earlier chunk are fetched for each q chunk, except chunk 0 which stays
  // resident from chunk 0 into chunk 1: u(u-1)/2 - 1 pairs, plus K0/V0 for the backward.
  EXPECT_EQ(count(Phase::kForward, h2d(kv_chunk)), 2 * (u * (u - 1) / 2 - 1) + 2);
  // One host sync after every attention block, one per chunk before the q/k/v offload, one at the end.
  EXPECT_EQ(count(Phase::kForward, [](const Op& op) { return op.kind == OpKind::kHostSync; }),
            u * (u + 1) / 2 + u + 1);
  // Backward: each of the u(u+1)/2 blocks accumulates into an fp32 dq chunk that goes back to the host.
  const auto d2h_dq = [dq_chunk](const Op& op) {
    return op.kind == OpKind::kCopy && op.copy.direction == CopyDirection::kDeviceToHost &&
           op.bytes == dq_chunk;
  };
  EXPECT_EQ(count(Phase::kBackward, d2h_dq), u * (u + 1) / 2);
  EXPECT_EQ(count(Phase::kBackward, [](const Op& op) { return op.kind == OpKind::kAttentionBackward; }),
            u * (u + 1) / 2);
  // The host_sync switch turns the syncs into stream waits.
  s.parallelism.fpdt.host_sync = false;
  const Graph no_sync = build_rank_graph(s, plan, 0);
  EXPECT_EQ(testing::count_ops(no_sync,
                               [](const Op& op) {
                                 return op.kind == OpKind::kHostSync && op.layer == 0 &&
                                        op.phase == Phase::kForward;
                               }),
            0);
}

TEST(Fpdt, ActivationCheckpointingReplaysTheWholeLoop) {
  testing::PlanSpec spec;
  spec.sp = 2;
  spec.sequence = SequenceParallel::kFpdt;
  spec.recompute = Recompute::kFull;
  config::Scenario s = testing::make_scenario("llama3-8b", 1, 1, spec);
  s.model.layers = 1;
  s.model.seq_len = 16384;
  s.parallelism.fpdt.chunk_tokens = 4096;  // u = 4
  const ParallelPlan plan = make_plan(s);
  const Graph g = build_rank_graph(s, plan, 0);
  const auto count = [&g](Phase phase, OpKind kind) {
    return testing::count_ops(
        g, [&](const Op& op) { return op.phase == phase && op.kind == kind && op.layer == 0; });
  };
  EXPECT_EQ(count(Phase::kRecompute, OpKind::kAttentionForward),
            count(Phase::kForward, OpKind::kAttentionForward));
  EXPECT_EQ(count(Phase::kRecompute, OpKind::kCollective), count(Phase::kForward, OpKind::kCollective));
  EXPECT_EQ(count(Phase::kRecompute, OpKind::kCopy), count(Phase::kForward, OpKind::kCopy));
}

}  // namespace
}  // namespace trainsim::workload
