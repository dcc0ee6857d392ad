// Communication in the graphs against the seed paper's formulas (seed-papers.md B4, A8;
// ground-truth.md A.7, A.9, B.4, B.11).
#include <map>
#include <vector>

#include <gtest/gtest.h>

#include "sim/analytic/comm_volume.h"
#include "sim/analytic/params.h"
#include "sim/workload/builder.h"
#include "sim/workload/comm_log.h"
#include "sim/workload/errors.h"
#include "sim/workload/layout.h"
#include "sim/workload/shapes.h"
#include "tests/workload/workload_test_util.h"

namespace trainsim::workload {
namespace {

using config::Recompute;
using config::SequenceParallel;

double group_volume(const std::vector<CommLogEntry>& log, GroupKind group) {
  double v = 0;
  for (const CommLogEntry& e : log) {
    if (e.group == group) v += e.volume_bytes;
  }
  return v;
}

bool in_layer(const Op& op) { return op.layer >= 0; }

// Anthony et al. 2024: ZeRO-3 moves 1.5x the data-parallel volume, ZeRO-1 and ZeRO-2 the same.
TEST(CommVolume, ZeroStagesAgainstDataParallel) {
  double volume[4];
  double psi = 0;
  for (int stage = 0; stage <= 3; ++stage) {
    testing::PlanSpec spec;
    spec.dp = 8;
    spec.zero = stage;
    config::Scenario sc = testing::make_scenario("llama2-7b", 8, 1, spec);
    sc.model.layers = 4;
    psi = static_cast<double>(analytic::parameter_count(sc.model).total);
    const ParallelPlan plan = make_plan(sc);
    volume[stage] = group_volume(comm_log(plan, build_rank_graph(sc, plan, 0)), GroupKind::kDp);
  }
  EXPECT_DOUBLE_EQ(volume[0], analytic::dp_allreduce_volume(psi, 2));
  EXPECT_DOUBLE_EQ(volume[1] / volume[0], 1.0);
  EXPECT_DOUBLE_EQ(volume[2] / volume[0], 1.0);
  EXPECT_DOUBLE_EQ(volume[3] / volume[0], 1.5);
  EXPECT_DOUBLE_EQ(volume[3], analytic::zero3_volume(psi, 2));
}

TEST(CommVolume, ZeroTwoAndThreeReduceEveryMicroBatch) {
  for (int stage : {1, 2, 3}) {
    testing::PlanSpec spec;
    spec.dp = 4;
    spec.zero = stage;
    config::Scenario sc = testing::make_scenario("llama2-7b", 12, 1, spec);  // 3 micro-batches
    sc.model.layers = 2;
    const double psi = static_cast<double>(analytic::parameter_count(sc.model).total);
    const ParallelPlan plan = make_plan(sc);
    const auto log = comm_log(plan, build_rank_graph(sc, plan, 0));
    double rs = 0, ag = 0;
    for (const CommLogEntry& e : log) {
      if (e.kind == CommKind::kReduceScatter) rs += e.total_bytes;
      if (e.kind == CommKind::kAllGather) ag += e.total_bytes;
    }
    EXPECT_DOUBLE_EQ(rs, (stage == 1 ? 1 : 3) * 2 * psi) << "ZeRO-" << stage;
    EXPECT_DOUBLE_EQ(ag, (stage == 3 ? 6 : 1) * 2 * psi) << "ZeRO-" << stage;
  }
}

// FSDP keeping parameters from forward to backward (reshard_after_forward: false) gathers once per
// micro-batch; under pipelining (torchtitan, zero3.h) each unit is gathered once and its gradients
// reduce-scattered once per iteration, whatever the micro-batches, in the reduce dtype (fp32).
TEST(CommVolume, FsdpGathersOncePerMicroBatchOrPerIteration) {
  struct Case {
    int64_t pp;
    bool reshard;
    double gathers, reductions;  // per parameter of the rank, with 4 micro-batches
  };
  for (const Case c : {Case{1, true, 8, 4}, Case{1, false, 4, 4}, Case{2, false, 1, 1}}) {
    testing::PlanSpec spec;
    spec.dp = 4;
    spec.pp = c.pp;
    spec.zero = 3;
    config::Scenario sc = testing::make_scenario("llama2-7b", 16, 1, spec);  // 4 micro-batches
    sc.model.layers = 4;
    sc.framework = config::Framework::kTorchtitan;
    sc.parallelism.reshard_after_forward = c.reshard;
    const ParallelPlan plan = make_plan(sc);
    const RankShapes shapes = derive_shapes(sc, plan);
    EXPECT_EQ(shapes.grad_bytes, 4);  // torchtitan reduces in fp32
    for (int64_t stage = 0; stage < c.pp; ++stage) {
      Coords coords;
      coords[Axis::kPp] = stage;
      const int64_t rank = plan.rank_of(coords);
      const double psi = static_cast<double>(stage_params(shapes, partition_layers(shapes), stage));
      double rs = 0, ag = 0;
      int64_t rs_calls = 0;
      for (const CommLogEntry& e : comm_log(plan, build_rank_graph(sc, plan, rank))) {
        if (e.group != GroupKind::kDp) continue;
        if (e.kind == CommKind::kReduceScatter) {
          rs += e.total_bytes;
          rs_calls += e.calls;
        }
        if (e.kind == CommKind::kAllGather) ag += e.total_bytes;
      }
      EXPECT_DOUBLE_EQ(ag, c.gathers * 2 * psi) << "pp " << c.pp << " reshard " << c.reshard;
      EXPECT_DOUBLE_EQ(rs, c.reductions * 4 * psi) << "pp " << c.pp << " reshard " << c.reshard;
      // One reduce-scatter per unit (embedding, layers, head) and micro-batch, or per unit.
      const StageLayout layout = partition_layers(shapes);
      const int64_t units = layout.layer_count[stage] + (stage == 0 ? 1 : 0) + (stage == c.pp - 1 ? 1 : 0);
      EXPECT_EQ(rs_calls, units * (c.pp > 1 ? 1 : 4));
    }
  }
}

// DeepSpeed stage 3 (zero3.h): a layer's all-gathers follow its tensors in the order of use,
// coalesced up to the prefetch bucket (5e7 elements); norms (under the persistence threshold of 1e5
// elements) are never gathered; gradients go through the 5e8-element ipg bucket, flushed when the next
// unit would overflow it and at the end of each backward. Llama-2 7B, 4 layers: a layer's tensors are
// QKV 50.3M, projection 16.8M, FC1 90.2M, FC2 45.1M elements, the head's matrix 131M.
TEST(CommVolume, DeepSpeedGathersByPrefetchBucketAndReducesByIpgBucket) {
  testing::PlanSpec spec;
  spec.dp = 4;
  spec.zero = 3;
  config::Scenario sc = testing::make_scenario("llama2-7b", 16, 1, spec);  // 4 micro-batches
  sc.model.layers = 4;
  sc.framework = config::Framework::kDeepSpeed;
  const ParallelPlan plan = make_plan(sc);
  const RankShapes shapes = derive_shapes(sc, plan);
  std::map<double, int64_t> gathers, reductions;  // calls by elements
  for (const CommLogEntry& e : comm_log(plan, build_rank_graph(sc, plan, 0))) {
    if (e.group != GroupKind::kDp) continue;
    const double elements = e.total_bytes / e.calls / 2;
    if (e.kind == CommKind::kAllGather) gathers[elements] += e.calls;
    if (e.kind == CommKind::kReduceScatter) reductions[elements] += e.calls;
  }
  const LayerParams p = layer_params(shapes);
  const double qkv = p.qkv_weight, proj = p.proj_weight, fc1 = p.fc1_weight, fc2 = p.fc2_weight;
  const double embedding = embedding_params(shapes), head = shapes.vocab_local * shapes.hidden;
  // Forward per layer: [QKV], [projection + FC1], [FC2]; backward: [FC2 + FC1], [projection + QKV].
  std::map<double, int64_t> expected = {{qkv, 4 * 4},       {proj + fc1, 4 * 4}, {fc2, 4 * 4},
                                        {fc2 + fc1, 4 * 4}, {proj + qkv, 4 * 4}, {embedding, 2 * 4}};
  expected[head] += 2 * 4;  // the untied head's matrix, forward and backward (it equals the embedding)
  EXPECT_EQ(gathers, expected);
  // Per micro-batch, in backward order: head + layer 3 | layers 2 and 1 | layer 0 + embedding.
  const double layer = p.total();
  const double final_norm = shapes.hidden;
  EXPECT_EQ(reductions, (std::map<double, int64_t>{
                            {head + final_norm + layer, 4}, {2 * layer, 4}, {layer + embedding, 4}}));
}

// Megatron TP: 2 all-reduces of bsh forward and 2 backward per layer and micro-batch, a volume per
// device of 8bsh(t-1)/t (Narayanan et al. 2021); full recompute adds the forward's two.
TEST(CommVolume, TensorParallelAllReducesPerLayer) {
  for (Recompute recompute : {Recompute::kNone, Recompute::kFull}) {
    testing::PlanSpec spec;
    spec.tp = 4;
    spec.recompute = recompute;
    config::Scenario sc = testing::make_scenario("megatron-1.7b", 2, 1, spec);  // 2 micro-batches
    sc.model.layers = 3;
    const ParallelPlan plan = make_plan(sc);
    const Graph g = build_rank_graph(sc, plan, 0);
    const double b = 1, s = 2048, h = 2304, t = 4, e = 2;
    const auto tp_layer_op = [](const Op& op) {
      return op.kind == OpKind::kCollective && op.collective.group.kind == GroupKind::kTp && in_layer(op);
    };
    const int64_t per_layer = recompute == Recompute::kFull ? 6 : 4;
    EXPECT_EQ(testing::count_ops(g, tp_layer_op), per_layer * 3 * 2);
    for (const Op& op : g.ops()) {
      if (!tp_layer_op(op)) continue;
      EXPECT_EQ(op.collective.kind, CollectiveKind::kAllReduce);
      EXPECT_DOUBLE_EQ(op.bytes, b * s * h * e);
    }
    const double wire = testing::sum_bytes(g, tp_layer_op) * wire_factor(CommKind::kAllReduce, 4) / (3 * 2);
    EXPECT_DOUBLE_EQ(wire, analytic::tp_layer_wire_volume(b, s, h, t, e) * per_layer / 4);
  }
}

// Megatron-SP replaces each all-reduce by a reduce-scatter and an all-gather; its backward also
// gathers the sequence-sharded input again for the weight gradients.
TEST(CommVolume, SequenceParallelGathersAndScatters) {
  testing::PlanSpec spec;
  spec.tp = 4;
  spec.sequence = SequenceParallel::kMegatron;
  config::Scenario sc = testing::make_scenario("megatron-1.7b", 1, 1, spec);
  sc.model.layers = 2;
  const ParallelPlan plan = make_plan(sc);
  const Graph g = build_rank_graph(sc, plan, 0);
  const auto count = [&g](CollectiveKind kind, Phase phase) {
    return testing::count_ops(g, [&](const Op& op) {
      return op.kind == OpKind::kCollective && op.collective.kind == kind && op.phase == phase &&
             in_layer(op);
    });
  };
  EXPECT_EQ(count(CollectiveKind::kAllGather, Phase::kForward), 2 * 2);
  EXPECT_EQ(count(CollectiveKind::kReduceScatter, Phase::kForward), 2 * 2);
  EXPECT_EQ(count(CollectiveKind::kAllGather, Phase::kBackward), 4 * 2);
  EXPECT_EQ(count(CollectiveKind::kReduceScatter, Phase::kBackward), 2 * 2);
  EXPECT_EQ(count(CollectiveKind::kAllReduce, Phase::kForward), 0);
}

// Pipeline: b*s*h per micro-batch and stage boundary in each direction (A.7), sent as b*s*h/t per TP
// rank: sequence-sharded under Megatron-SP, else split by Megatron's scatter/gather and all-gathered
// over TP at the receiver.
TEST(CommVolume, PipelineSendsOneActivationAndOneGradientPerBoundary) {
  for (SequenceParallel sequence : {SequenceParallel::kNone, SequenceParallel::kMegatron}) {
    testing::PlanSpec spec;
    spec.pp = 4;
    spec.tp = 2;
    spec.sequence = sequence;
    config::Scenario sc = testing::make_scenario("megatron-1.7b", 8, 1, spec);  // 8 micro-batches
    const ParallelPlan plan = make_plan(sc);
    const std::vector<Graph> graphs = build_class_graphs(sc, plan);
    const double message = 1.0 * 2048 * 2304 * 2 / 2;
    for (int64_t stage = 0; stage < 4; ++stage) {
      const auto log = comm_log(plan, graphs[stage]);
      double sends = 0, gathers = 0;
      for (const CommLogEntry& e : log) {
        if (e.kind == CommKind::kAllGather && e.bytes_per_call == 2 * message) gathers += e.calls;
        if (e.kind != CommKind::kSend) continue;
        EXPECT_EQ(e.group, GroupKind::kPp);
        EXPECT_DOUBLE_EQ(e.bytes_per_call, message);
        sends += static_cast<double>(e.calls);
      }
      const int boundaries = (stage > 0 ? 1 : 0) + (stage < 3 ? 1 : 0);
      EXPECT_EQ(sends, 8 * boundaries) << "stage " << stage;
      if (sequence == SequenceParallel::kNone) {
        EXPECT_EQ(gathers, 8 * boundaries) << "stage " << stage;
      }
    }
  }
}

// DeepSpeed-Ulysses: 4 all-to-alls forward and 4 backward per layer; the forward's sum to
// 4*N*h/P per rank for multi-head attention (ground-truth.md B.4).
TEST(CommVolume, UlyssesAllToAllsPerLayer) {
  testing::PlanSpec spec;
  spec.sp = 4;
  spec.sequence = SequenceParallel::kUlysses;
  config::Scenario sc = testing::make_scenario("megatron-1.7b", 1, 1, spec);
  sc.model.layers = 2;
  const ParallelPlan plan = make_plan(sc);
  const Graph g = build_rank_graph(sc, plan, 0);
  const auto a2a = [](Phase phase) {
    return [phase](const Op& op) {
      return op.kind == OpKind::kCollective && op.collective.kind == CollectiveKind::kAllToAll &&
             op.phase == phase;
    };
  };
  EXPECT_EQ(testing::count_ops(g, a2a(Phase::kForward)), 4 * 2);
  EXPECT_EQ(testing::count_ops(g, a2a(Phase::kBackward)), 4 * 2);
  EXPECT_DOUBLE_EQ(testing::sum_bytes(g, a2a(Phase::kForward)) / 2,
                   analytic::ulysses_layer_forward_volume(1, 2048, 2304, 4, 2));
  // GQA: the k and v messages shrink with the key/value heads.
  config::Scenario gqa = testing::make_scenario("llama3-8b", 1, 1, spec);
  gqa.model.layers = 1;
  const ParallelPlan gqa_plan = make_plan(gqa);
  const Graph gg = build_rank_graph(gqa, gqa_plan, 0);
  const double q = 2.0 * (8192 / 4) * 32 * 128, kv = 2.0 * (8192 / 4) * 8 * 128;
  EXPECT_DOUBLE_EQ(testing::sum_bytes(gg, a2a(Phase::kForward)), 2 * q + 2 * kv);
}

// More ranks than K/V heads: Llama-3 8B's 8 K/V heads on sp 32 are repeated 4 times so that every rank
// gets one (DeepSpeed's ulysses_sp.py), the k and v all-to-alls carry the copies (as large as q's), and
// one memory pass repeats them in the forward and one sums their gradients in the backward.
TEST(CommVolume, UlyssesRepeatsKeyValueHeadsForMoreRanksThanHeads) {
  testing::PlanSpec spec;
  spec.sp = 32;
  spec.sequence = SequenceParallel::kUlysses;
  config::Scenario sc = testing::make_scenario("llama3-8b", 1, 1, spec);
  sc.model.layers = 1;
  const ParallelPlan plan = make_plan(sc);
  const RankShapes shapes = derive_shapes(sc, plan);
  EXPECT_EQ(shapes.kv_replication, 4);
  EXPECT_EQ(shapes.attn_heads, 1);
  EXPECT_EQ(shapes.attn_kv_heads, 1);
  const Graph g = build_rank_graph(sc, plan, 0);
  const auto forward_a2a = [](const Op& op) {
    return op.kind == OpKind::kCollective && op.collective.kind == CollectiveKind::kAllToAll &&
           op.phase == Phase::kForward;
  };
  const double tokens = 8192.0 / 32, q = 2.0 * tokens * 32 * 128, kv = 2.0 * tokens * 8 * 128;
  EXPECT_DOUBLE_EQ(testing::sum_bytes(g, forward_a2a), 4 * q);  // q, the k and v copies, the output
  const auto repeat = [](Phase phase) {
    return [phase](const Op& op) {
      return op.kind == OpKind::kMemory && op.label == OpLabel::kQkv && op.phase == phase;
    };
  };
  EXPECT_DOUBLE_EQ(testing::sum_bytes(g, repeat(Phase::kForward)), 2 * kv * (1 + 4));
  EXPECT_DOUBLE_EQ(testing::sum_bytes(g, repeat(Phase::kBackward)), 2 * kv * (1 + 4));
  // sp and the K/V heads, neither dividing the other, are refused.
  spec.sp = 24;
  config::Scenario odd = testing::make_scenario("llama3-8b", 1, 1, spec);
  odd.model.heads = 48;
  odd.model.kv_heads = 16;
  odd.model.seq_len = 24 * 1024;
  EXPECT_THROW(
      {
        try {
          derive_shapes(odd, make_plan(odd));
        } catch (const PlanError& e) {
          EXPECT_STREQ(
              e.what(),
              "parallelism.sp: sp 24 must divide the 16 K/V heads, or be a multiple of it (K/V heads are "
              "then replicated)");
          throw;
        }
      },
      PlanError);
}

// Context parallelism by all-gather (Megatron-Core's cp_comm_type all_gather, as Llama 3 runs it): K and
// V of the whole sequence gathered once in the forward and again in the backward, their gradients
// reduce-scattered; the attention does the same work as the ring's, in two kernels.
TEST(CommVolume, ContextParallelAllGatherGathersKeyValueOnce) {
  testing::PlanSpec spec;
  spec.sp = 4;
  spec.sequence = SequenceParallel::kRing;
  config::Scenario ring = testing::make_scenario("llama3-8b", 1, 1, spec);
  ring.model.layers = 1;
  config::Scenario gathered = ring;
  gathered.parallelism.cp_comm = config::CpComm::kAllGather;
  const ParallelPlan plan = make_plan(gathered);
  const Graph g = build_rank_graph(gathered, plan, 0);
  const double message = 2.0 * 8192 * 8 * 128;  // the whole sequence's K (or V), 8 heads of 128
  const auto collectives = [](CollectiveKind kind, Phase phase) {
    return [kind, phase](const Op& op) {
      return op.kind == OpKind::kCollective && op.collective.kind == kind && op.phase == phase &&
             op.collective.group.kind == GroupKind::kSp;
    };
  };
  EXPECT_EQ(testing::count_ops(g, collectives(CollectiveKind::kAllGather, Phase::kForward)), 2);
  EXPECT_DOUBLE_EQ(testing::sum_bytes(g, collectives(CollectiveKind::kAllGather, Phase::kForward)),
                   2 * message);
  EXPECT_EQ(testing::count_ops(g, collectives(CollectiveKind::kAllGather, Phase::kBackward)), 2);
  EXPECT_DOUBLE_EQ(testing::sum_bytes(g, collectives(CollectiveKind::kReduceScatter, Phase::kBackward)),
                   2 * message);
  EXPECT_EQ(testing::count_ops(g, [](const Op& op) { return op.kind == OpKind::kSend; }), 0);
  const auto attention_flops = [](const Graph& graph) {
    double flops = 0;
    for (const Op& op : graph.ops()) {
      if (op.kind == OpKind::kAttentionForward || op.kind == OpKind::kAttentionBackward)
        flops += op.model_flops;
    }
    return flops;
  };
  const ParallelPlan ring_plan = make_plan(ring);
  EXPECT_DOUBLE_EQ(attention_flops(g), attention_flops(build_rank_graph(ring, ring_plan, 0)));
}

// Ring attention: P-1 K/V passes forward, each overlapping an attention block.
TEST(CommVolume, RingAttentionPassesKeyValueBlocks) {
  testing::PlanSpec spec;
  spec.sp = 4;
  spec.tp = 2;
  spec.sequence = SequenceParallel::kRing;
  config::Scenario sc = testing::make_scenario("llama3-8b", 1, 1, spec);
  sc.model.layers = 1;
  const ParallelPlan plan = make_plan(sc);
  const Graph g = build_rank_graph(sc, plan, 0);
  const double kv = 2.0 * 2 * (8192 / 4) * (8 / 2) * 128;  // K and V, local tokens, kv heads / tp
  const auto sends = [&g](Phase phase) {
    std::vector<double> sizes;
    for (const Op& op : g.ops()) {
      if (op.kind == OpKind::kSend && op.label == OpLabel::kCpComm && op.phase == phase)
        sizes.push_back(op.bytes);
    }
    return sizes;
  };
  EXPECT_EQ(sends(Phase::kForward), (std::vector<double>{kv, kv, kv}));
  EXPECT_EQ(sends(Phase::kBackward), (std::vector<double>{kv, 2 * kv, 2 * kv, kv}));
  EXPECT_EQ(testing::count_ops(g,
                               [](const Op& op) {
                                 return op.kind == OpKind::kAttentionForward && op.phase == Phase::kForward;
                               }),
            4);
}

// FPDT (seed-papers.md A8): per layer, 4u all-to-alls forward of 1/u the Ulysses message and
// u(u+1)/2 attention blocks; the same all-to-all volume as Ulysses.
TEST(CommVolume, FpdtSplitsUlyssesIntoChunks) {
  for (bool offload : {true, false}) {
    testing::PlanSpec spec;
    spec.sp = 4;
    spec.sequence = SequenceParallel::kFpdt;
    config::Scenario sc = testing::make_scenario("llama3-8b", 1, 1, spec);
    sc.model.layers = 1;
    sc.model.seq_len = 65536;
    sc.parallelism.fpdt.chunk_tokens = 16384;  // u = 4
    sc.parallelism.fpdt.offload = offload;
    const ParallelPlan plan = make_plan(sc);
    const Graph g = build_rank_graph(sc, plan, 0);
    const int64_t u = 4;
    const auto layer_ops = [&g](OpKind kind, Phase phase) {
      return testing::count_ops(
          g, [&](const Op& op) { return op.kind == kind && op.phase == phase && op.layer >= 0; });
    };
    const auto a2a = [](Phase phase) {
      return [phase](const Op& op) {
        return op.kind == OpKind::kCollective && op.collective.kind == CollectiveKind::kAllToAll &&
               op.phase == phase && op.layer >= 0;
      };
    };
    EXPECT_EQ(testing::count_ops(g, a2a(Phase::kForward)), 4 * u) << offload;
    EXPECT_EQ(testing::count_ops(g, a2a(Phase::kBackward)), 4 * u) << offload;
    EXPECT_EQ(layer_ops(OpKind::kAttentionForward, Phase::kForward), u * (u + 1) / 2) << offload;
    EXPECT_EQ(layer_ops(OpKind::kAttentionBackward, Phase::kBackward), u * (u + 1) / 2) << offload;
    // Same volume as Ulysses on the same model.
    testing::PlanSpec uspec = spec;
    uspec.sequence = SequenceParallel::kUlysses;
    config::Scenario us = testing::make_scenario("llama3-8b", 1, 1, uspec);
    us.model.layers = 1;
    us.model.seq_len = 65536;
    const ParallelPlan uplan = make_plan(us);
    const Graph ug = build_rank_graph(us, uplan, 0);
    EXPECT_DOUBLE_EQ(testing::sum_bytes(g, a2a(Phase::kForward)),
                     testing::sum_bytes(ug, a2a(Phase::kForward)));
    // Causal diagonal: u of the forward blocks are causal.
    EXPECT_EQ(testing::count_ops(g,
                                 [](const Op& op) {
                                   return op.kind == OpKind::kAttentionForward &&
                                          op.phase == Phase::kForward && op.attention.causal;
                                 }),
              u);
    // Offload: one world barrier per chunk forward; D2H of x, q, k, v, o, lse per chunk.
    const int64_t barriers = testing::count_ops(g, [](const Op& op) {
      return op.kind == OpKind::kCollective && op.collective.kind == CollectiveKind::kBarrier &&
             op.phase == Phase::kForward;
    });
    EXPECT_EQ(barriers, offload ? u : 0);
    const int64_t offloads = testing::count_ops(g, [](const Op& op) {
      return op.kind == OpKind::kCopy && op.copy.direction == CopyDirection::kDeviceToHost &&
             op.phase == Phase::kForward && op.layer >= 0;
    });
    EXPECT_EQ(offloads, offload ? 6 * u : 0);
  }
}

}  // namespace
}  // namespace trainsim::workload
