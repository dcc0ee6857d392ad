// Context parallelism with K/V all-gathered, as Megatron-Core runs it with cp_comm_type all_gather
// (Transformer Engine attention/dot_product_attention/context_parallel.py,
// AttnFuncWithCPAndKVAllGather) and as Llama 3 trained at long context (Grattafiori et al. 2024,
// section 3.3.2).
//
// The sequence is cut into 2P chunks and rank r holds chunks r and 2P-1-r (get_batch_on_this_cp_rank),
// so every rank does the same causal work. Forward: K and V are all-gathered over the context-parallel
// group (one collective each, the whole sequence's K/V of the rank's heads, before any attention), then
// each local query chunk attends causally to the K/V before it: chunk r to r+1 chunks, chunk 2P-1-r to
// 2P-r. The same work is priced as two kernels every rank shares (keeping context-parallel ranks
// symmetric, as ring_attention.cc does): the causal block of the two local chunks against each other,
// and a block of both local chunks against P-1 chunks of the others, unmasked. The gathered K/V is
// freed after the forward; the backward gathers it again, runs the two blocks' backward, adds the
// gradients of the two query chunks' overlapping K/V and reduce-scatters dK and dV back to their
// owners.
#include "sim/workload/context.h"

namespace trainsim::workload {
namespace {

// The causal block of the rank's two chunks (step 0 of ring attention), and the unmasked block of both
// chunks against P-1 chunks: together, the rank's share of the causal attention.
AttentionShape block(const RankShapes& s, bool local) {
  const int32_t q = static_cast<int32_t>(s.tokens);
  return {static_cast<int32_t>(s.batch),
          static_cast<int32_t>(s.attn_heads),
          static_cast<int32_t>(s.attn_kv_heads),
          q,
          local ? q : static_cast<int32_t>((s.sp - 1) * s.tokens / 2),
          static_cast<int32_t>(s.qk_head_dim()),
          static_cast<int32_t>(s.v_head_dim),
          local,
          true};
}

// The whole sequence's K (or V, head_dim `width`) of the rank's heads: what the all-gather delivers.
double gathered_bytes(const RankShapes& s, int64_t width) {
  return static_cast<double>(s.act_bytes) * static_cast<double>(s.batch * s.seq * s.attn_kv_heads) *
         static_cast<double>(width);
}

// All-gathers K and V after `after`; returns the second.
OpId gather_kv(BuildContext& ctx, OpId after) {
  const RankShapes& s = ctx.shapes;
  ctx.w.collective(OpLabel::kCpComm, CollectiveKind::kAllGather, GroupKind::kSp,
                   gathered_bytes(s, s.qk_head_dim()), Stream::kComm, {after});
  return ctx.w.collective(OpLabel::kCpComm, CollectiveKind::kAllGather, GroupKind::kSp,
                          gathered_bytes(s, s.v_head_dim), Stream::kComm, {after});
}

BufferId buffer(BuildContext& ctx, double bytes) {
  return ctx.w
      .alloc(OpLabel::kCommBuffer, MemoryCategory::kBuffers, MemorySpace::kHbm, bytes, Stream::kCompute)
      .buffer;
}

}  // namespace

void all_gather_attention_forward(BuildContext& ctx) {
  GraphWriter& w = ctx.w;
  const RankShapes& s = ctx.shapes;
  const double kv = gathered_bytes(s, s.qk_head_dim() + s.v_head_dim);
  const double local_share = 1.0 / static_cast<double>(s.sp);
  const BufferId gathered = buffer(ctx, kv);
  const OpId ready = gather_kv(ctx, w.last(Stream::kCompute));
  w.attention(false, block(s, true), local_share * ctx.attention_model_flops, {ready}, 0);
  if (s.sp > 1) {
    w.attention(false, block(s, false), (1 - local_share) * ctx.attention_model_flops, {}, 1);
  }
  w.release(gathered, Stream::kCompute);
}

void all_gather_attention_backward(BuildContext& ctx) {
  GraphWriter& w = ctx.w;
  const RankShapes& s = ctx.shapes;
  const double kv = gathered_bytes(s, s.qk_head_dim() + s.v_head_dim);
  const double local_share = 1.0 / static_cast<double>(s.sp);
  const BufferId gathered = buffer(ctx, 2 * kv);  // K/V and their gradients, whole sequence
  const OpId ready = gather_kv(ctx, w.last(Stream::kCompute));
  w.attention(true, block(s, true), 2 * local_share * ctx.attention_model_flops, {ready}, 0);
  if (s.sp > 1) {
    w.attention(true, block(s, false), 2 * (1 - local_share) * ctx.attention_model_flops, {}, 1);
  }
  // The two query chunks' dK/dV overlap on the K/V before the first: one pass adds them.
  const OpId summed = w.memory(OpLabel::kGradAccumulate, 3 * kv);
  w.collective(OpLabel::kCpComm, CollectiveKind::kReduceScatter, GroupKind::kSp,
               gathered_bytes(s, s.qk_head_dim()), Stream::kComm, {summed});
  w.collective(OpLabel::kCpComm, CollectiveKind::kReduceScatter, GroupKind::kSp,
               gathered_bytes(s, s.v_head_dim), Stream::kComm, {summed});
  w.release(gathered, Stream::kComm);
}

}  // namespace trainsim::workload
