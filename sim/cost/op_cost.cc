#include "sim/cost/op_cost.h"

#include <map>
#include <tuple>

namespace trainsim::cost {

using workload::Graph;
using workload::Op;
using workload::OpId;
using workload::OpKind;

UnfusedAttentionTimes unfused_attention_times(const Op& op, const ComputeModel& compute) {
  // The batched GEMMs (each priced as one GEMM of the batch's rows, the score matrix being the
  // output or input of every one), then the softmax/dropout passes over the score matrix.
  const workload::UnfusedAttentionGemms g = workload::unfused_attention_gemms(op.attention);
  const double bmm_s = compute.gemm_s(g.scores.m, g.scores.n, g.scores.k, op.dtype) +
                       compute.gemm_s(g.values.m, g.values.n, g.values.k, op.dtype);
  return {(op.kind == OpKind::kAttentionForward ? 1 : 2) * bmm_s, compute.memory_s(op.bytes)};
}

std::vector<double> compute_durations(const Graph& graph, const ComputeModel& compute, double speed) {
  std::vector<double> out(graph.size(), 0.0);
  // Each distinct GEMM priced once: a graph repeats a few shapes in every layer and micro-batch, and
  // pricing one interpolates the profile's samples.
  std::map<std::tuple<int64_t, int64_t, int64_t, config::Dtype, int32_t>, double> gemm_s;
  for (OpId id = 0; id < graph.size(); ++id) {
    const Op& op = graph.op(id);
    switch (op.kind) {
      case OpKind::kGemm: {
        const auto [priced, fresh] =
            gemm_s.try_emplace({op.gemm.m, op.gemm.n, op.gemm.k, op.dtype, op.gemm.groups}, 0.0);
        if (fresh) priced->second = compute.gemm_s(op.gemm.m, op.gemm.n, op.gemm.k, op.dtype, op.gemm.groups);
        out[id] = priced->second;
        if (op.dtype == config::Dtype::kFp8 && op.gemm.pass != workload::GemmPass::kWeightGrad) {
          // Transformer Engine casts the GEMM's m x k activation (forward) or output gradient
          // (input gradient) to fp8 first, reading bf16 and writing fp8; the weight gradient reuses
          // both casts and the weights' fp8 copies are cast once per iteration.
          out[id] += compute.memory_s(3.0 * static_cast<double>(op.gemm.groups * op.gemm.m * op.gemm.k));
        }
        break;
      }
      case OpKind::kAttentionForward:
      case OpKind::kAttentionBackward: {
        const workload::AttentionShape& a = op.attention;
        if (!a.fused) {
          const UnfusedAttentionTimes t = unfused_attention_times(op, compute);
          out[id] = t.gemm_s + t.memory_s;
          break;
        }
        const AttentionCall call{op.kind == OpKind::kAttentionForward ? config::AttentionPass::kForward
                                                                      : config::AttentionPass::kBackward,
                                 a.causal,
                                 op.dtype,
                                 a.batch,
                                 a.heads,
                                 a.kv_heads,
                                 a.q_len,
                                 a.kv_len,
                                 a.head_dim,
                                 a.value_dim};
        out[id] = compute.attention_s(call);
        break;
      }
      case OpKind::kMemory:
      case OpKind::kOptimizerStep:
        out[id] = compute.memory_s(op.bytes);
        break;
      case OpKind::kHostSync:
        out[id] = compute.host_sync_s();
        continue;                // host work: the GPU's speed does not matter
      case OpKind::kCollective:  // the network's or the host link's time (transport, ideal tiers)
      case OpKind::kSend:
      case OpKind::kRecv:
      case OpKind::kCopy:
      case OpKind::kStreamWait:  // ordering and bookkeeping: no GPU time
      case OpKind::kAlloc:
      case OpKind::kFree:
        continue;
    }
    out[id] /= speed;
  }
  return out;
}

}  // namespace trainsim::cost
