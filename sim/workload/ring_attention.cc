// Ring attention as Megatron-LM context parallelism runs it (Transformer Engine
// attention/dot_product_attention/context_parallel.py, AttnFuncWithCPAndKVP2P, causal, P2P).
//
// Load balancing: the sequence is cut into 2P chunks and rank r holds chunks r and 2P-1-r, so every
// rank does the same causal work. Forward: P steps; at step i the rank runs one attention block on
// the K/V it holds and, for i < P-1, sends that K/V to the next rank of the ring while receiving the
// previous rank's (batched isend/irecv on a separate stream, overlapping the block): P-1 K/V passes
// of 2*b*(s/P)*h_kv*d*e bytes. Step 0 is the causal block of the local chunks; every later step
// attends either all local queries to the first half of the remote K/V or the second half of the
// queries to all of it -- the same FLOPs either way, so every rank is given the first shape (this
// keeps context-parallel ranks symmetric; ParallelPlan's classes rely on it). Each step after the
// first merges its output and log-sum-exp into the running result.
// Backward: P steps in the opposite direction (send to the previous rank, receive from the next);
// step 0 sends K/V, steps 1..P-2 send K/V together with the dK/dV accumulated so far, step P-1 sends
// dK/dV only, and the rank's own dK/dV arrives with the last receive.
#include "sim/workload/context.h"

namespace trainsim::workload {
namespace {

struct Ring {
  int64_t size;
  int64_t next;
  int64_t prev;
};

Ring ring_of(const BuildContext& ctx) {
  const std::vector<int64_t> members = ctx.plan.members(ctx.plan.group_of(ctx.rank, GroupKind::kSp));
  const int64_t local = ctx.plan.rank_in_group(ctx.rank, GroupKind::kSp);
  const int64_t size = static_cast<int64_t>(members.size());
  return {size, members[(local + 1) % size], members[(local + size - 1) % size]};
}

AttentionShape step_shape(const RankShapes& s, int64_t step) {
  const int32_t q = static_cast<int32_t>(s.tokens);
  return {static_cast<int32_t>(s.batch),
          static_cast<int32_t>(s.attn_heads),
          static_cast<int32_t>(s.attn_kv_heads),
          q,
          step == 0 ? q : q / 2,
          static_cast<int32_t>(s.qk_head_dim()),
          static_cast<int32_t>(s.v_head_dim),
          step == 0,
          true};
}

double kv_bytes(const RankShapes& s) {
  return static_cast<double>(s.act_bytes) * static_cast<double>(s.batch * s.tokens * s.attn_kv_heads) *
         static_cast<double>(s.qk_head_dim() + s.v_head_dim);
}

}  // namespace

void ring_attention_forward(BuildContext& ctx, int64_t layer, int64_t micro_batch) {
  GraphWriter& w = ctx.w;
  const RankShapes& s = ctx.shapes;
  const Ring ring = ring_of(ctx);
  const P2pKind kind =
      w.position().phase == Phase::kRecompute ? P2pKind::kRingRecompute : P2pKind::kRingForward;
  const double kv = kv_bytes(s);
  const double per_block = ctx.attention_model_flops / static_cast<double>(ring.size);
  // Two receive buffers, used alternately.
  const BufferId buffers =
      w.alloc(OpLabel::kCommBuffer, MemoryCategory::kBuffers, MemorySpace::kHbm, 2 * kv, Stream::kCompute)
          .buffer;
  OpId kv_ready = w.last(Stream::kCompute);  // the local K/V
  for (int64_t i = 0; i < ring.size; ++i) {
    OpId received = kNoOp;
    if (i + 1 < ring.size) {
      const int64_t tag = p2p_tag(kind, micro_batch, layer, i);
      w.send(OpLabel::kCpComm, ring.next, tag, kv, {kv_ready}, static_cast<int32_t>(i));
      received = w.recv(OpLabel::kCpComm, ring.prev, tag, kv, {kv_ready}, static_cast<int32_t>(i));
    }
    w.attention(false, step_shape(s, i), per_block, {kv_ready}, static_cast<int32_t>(i));
    if (i > 0) {
      const double out = static_cast<double>(s.batch) * s.tokens * s.attn_heads * s.v_head_dim;
      w.memory(OpLabel::kAttentionMerge,
               out * (s.act_bytes + 2 * 4.0) + 3 * 4.0 * s.batch * s.tokens * s.attn_heads, {},
               static_cast<int32_t>(i));
    }
    kv_ready = received;
  }
  w.release(buffers, Stream::kCompute);
}

void ring_attention_backward(BuildContext& ctx, int64_t layer, int64_t micro_batch) {
  GraphWriter& w = ctx.w;
  const RankShapes& s = ctx.shapes;
  const Ring ring = ring_of(ctx);
  const double kv = kv_bytes(s);
  const double per_block = 2 * ctx.attention_model_flops / static_cast<double>(ring.size);
  const BufferId buffers =
      w.alloc(OpLabel::kCommBuffer, MemoryCategory::kBuffers, MemorySpace::kHbm, 4 * kv, Stream::kCompute)
          .buffer;
  OpId kv_ready = w.last(Stream::kCompute);
  OpId dkv_ready = kNoOp;
  OpId received = kNoOp;
  for (int64_t i = 0; i < ring.size; ++i) {
    const int64_t tag = p2p_tag(P2pKind::kRingBackward, micro_batch, layer, i);
    const double bytes = (i == 0 || i + 1 == ring.size) ? kv : 2 * kv;
    if (ring.size > 1) {
      w.send(OpLabel::kCpComm, ring.prev, tag, bytes, {kv_ready, dkv_ready}, static_cast<int32_t>(i));
      received =
          w.recv(OpLabel::kCpComm, ring.next, tag, bytes, {kv_ready, dkv_ready}, static_cast<int32_t>(i));
    }
    w.attention(true, step_shape(s, i), per_block, {kv_ready}, static_cast<int32_t>(i));
    const double dq = static_cast<double>(s.batch) * s.tokens * s.attn_heads * s.qk_head_dim();
    // dQ accumulates in fp32; dK/dV add onto the partial sums received with the K/V.
    dkv_ready = w.memory(OpLabel::kGradAccumulate, dq * (s.act_bytes + 2 * 4.0) + 3 * kv,
                         {i > 0 ? kv_ready : kNoOp}, static_cast<int32_t>(i));
    kv_ready = received;
  }
  // The rank's own dK/dV arrive with the last receive.
  if (ring.size > 1) w.memory(OpLabel::kGradAccumulate, kv, {received});
  w.release(buffers, Stream::kCompute);
}

}  // namespace trainsim::workload
