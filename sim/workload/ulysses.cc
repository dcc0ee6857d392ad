// DeepSpeed-Ulysses attention (Jacobs et al. 2023; deepspeed/sequence/layer.py DistributedAttention).
// Each rank holds seq/sp tokens with all heads after the QKV GEMM. Forward: q, k and v each go
// through one synchronous all-to-all on the sequence-parallel group that gathers the sequence and
// scatters the heads ([b, s/P, H, d] -> [b, s, H/P, d]); the model's attention kernel (fused or not:
// DistributedAttention wraps either) runs over the whole sequence for H/P heads; one all-to-all brings the
// output back. Backward mirrors it: the output gradient's all-to-all, the attention backward, and the
// all-to-alls of dq, dk and dv: 4 + 4 per layer (seed-papers.md A8, B4). Message per rank: b*(s/P)*H*d*e for
// q/o, H_kv for k/v, so the four forward messages sum to the 4Nh/P per rank of ground-truth.md B.4 for MHA.
// With fewer K/V heads than ranks, k and v are first repeated sp / H_kv times (one memory pass each way:
// the copies in the forward, their gradients summed in the backward) and their all-to-alls carry the
// copies (RankShapes::kv_replication).
#include "sim/workload/context.h"

namespace trainsim::workload {
namespace {

AttentionShape ulysses_shape(const RankShapes& s) {
  return {static_cast<int32_t>(s.batch),
          static_cast<int32_t>(s.attn_heads),
          static_cast<int32_t>(s.attn_kv_heads),
          static_cast<int32_t>(s.seq),
          static_cast<int32_t>(s.seq),
          static_cast<int32_t>(s.qk_head_dim()),
          static_cast<int32_t>(s.v_head_dim),
          true,
          s.fused_attention,
          s.dropout && !s.fused_attention};
}

// Per rank: b*(s/P) tokens of `width` elements.
double message(const RankShapes& s, int64_t width) {
  return static_cast<double>(s.act_bytes) * static_cast<double>(s.batch * s.tokens * width);
}
double q_bytes(const RankShapes& s) { return message(s, s.q_width()); }
double k_bytes(const RankShapes& s) { return message(s, s.a2a_kv_heads() * s.qk_head_dim()); }
double v_bytes(const RankShapes& s) { return message(s, s.a2a_kv_heads() * s.v_head_dim); }
double o_bytes(const RankShapes& s) { return message(s, s.attn_out_width()); }

// The pass that repeats k and v (forward) or sums their copies' gradients (backward): one copy read
// or written, kv_replication written or read. Returns `after` when nothing is repeated.
OpId replicate_kv(BuildContext& ctx, OpId after) {
  const RankShapes& s = ctx.shapes;
  if (s.kv_replication == 1) return after;
  const double once = message(s, s.qkv_kv_heads * (s.qk_head_dim() + s.v_head_dim));
  return ctx.w.memory(OpLabel::kQkv, once * static_cast<double>(1 + s.kv_replication), {after});
}

OpId all_to_all(BuildContext& ctx, double bytes, OpId after) {
  return ctx.w.collective(OpLabel::kSpComm, CollectiveKind::kAllToAll, GroupKind::kSp, bytes, Stream::kComm,
                          {after});
}

}  // namespace

void ulysses_attention_forward(BuildContext& ctx) {
  GraphWriter& w = ctx.w;
  const RankShapes& s = ctx.shapes;
  const OpId qkv = w.last(Stream::kCompute);
  all_to_all(ctx, q_bytes(s), qkv);
  const OpId kv = replicate_kv(ctx, qkv);
  all_to_all(ctx, k_bytes(s), kv);
  const OpId v = all_to_all(ctx, v_bytes(s), kv);
  const OpId attention = w.attention(false, ulysses_shape(s), ctx.attention_model_flops, {v});
  all_to_all(ctx, o_bytes(s), attention);
}

void ulysses_attention_backward(BuildContext& ctx) {
  GraphWriter& w = ctx.w;
  const RankShapes& s = ctx.shapes;
  const OpId grad = all_to_all(ctx, o_bytes(s), w.last(Stream::kCompute));
  const OpId attention = w.attention(true, ulysses_shape(s), 2 * ctx.attention_model_flops, {grad});
  all_to_all(ctx, q_bytes(s), attention);
  all_to_all(ctx, k_bytes(s), attention);
  replicate_kv(ctx, all_to_all(ctx, v_bytes(s), attention));
}

}  // namespace trainsim::workload
