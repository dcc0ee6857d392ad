// FPDT (Ulysses-Offload) as DeepSpeed runs it: deepspeed/sequence/fpdt_layer.py and the
// Megatron-DeepSpeed layer around it (seed-papers.md A2-A8). Notation: u chunks of c = chunk_tokens
// global tokens, c_l = c/P local tokens each, h_l = H/P query heads and H_kv/P key/value heads per
// rank after the all-to-all. Stream::kCopy is DeepSpeed's `offload_stream`, Stream::kCopyAux its
// `general_offload_stream`; "sync" is compute_stream.wait_stream(offload_stream) followed by
// compute_stream.synchronize(), a kHostSync op (a kStreamWait when fpdt.host_sync is off).
//
// Layer forward: norm; attention (below) into the O(S/P) final output; the dense projection on the
// whole local sequence; residual; norm; FPDT_FFN in chunk_tokens/P/2-token chunks (its backward
// recomputes FC1 and the activation chunk by chunk); residual.
// Attention forward with offload (_FPDTGPUOffloadingAttentionImpl_.forward), for chunk i:
//   QKV GEMM on the chunk's c_l tokens; D2H of the x chunk on kCopyAux; all-to-alls of q, k and v
//   (blocking, SP group) and a world barrier; RoPE; sync; D2H of q, k, v on kCopy (the GPU copies
//   stay in use); attention blocks j = 0..i (causal on j == i), each followed by the online-softmax
//   merge, the one-ahead H2D prefetch of the next K/V chunk (unless it is chunk i or already
//   resident), at the very last block the H2D of Q0, K0, V0, O0 and LSE0 for the backward, a sync,
//   and the release of the K/V chunk just used; release of q_i; the output all-to-all; D2H of o_i
//   and lse_i on kCopyAux. After the last chunk: wait for kCopyAux and sync.
// Attention backward with offload: X0 H2D; the first output-gradient all-to-all; a device sync;
//   fp32 dq buffers (chunk 0 on the GPU, the rest in pinned host memory) and fp32 dk/dv
//   accumulators; then k/v-outer (i), q-inner (q = i..u-1): one backward block (causal on q == i),
//   then on kCopy the release of the previous dq chunk (unless it is dq_i) and the H2D prefetch of
//   dq, q, o, lse and dO of the next q chunk -- on the first outer pass the dO chunk comes instead
//   from the output gradient's all-to-all and a world barrier, and is offloaded; sync; fp32
//   accumulation of dq, dk, dv; D2H of the dq partial (the fp32 dq round trip); release of the q-side
//   chunks. After each inner loop: sync, RoPE backward, the dq/dk/dv all-to-alls, wait for kCopyAux,
//   world barrier, QKV weight and input gradients for chunk i, prefetch of K/V (kCopy) and x
//   (kCopyAux) of chunk i+1, sync, release of chunk i's x/K/V.
// Without offload, or with one chunk (_FPDTGPUAttentionImpl_): the same chunked compute and
// all-to-alls with everything kept on the GPU, no copies, barriers or syncs; the output all-to-alls
// run after all chunks; the backward first runs all u output-gradient all-to-alls, keeps fp32 dq, dk
// and dv for every chunk, and after each k/v chunk all-to-alls dk and dv; the u dq all-to-alls follow
// at the end.
// With activation checkpointing the first forward runs without autograd, so nothing is kept
// (host chunks are released at the end of the layer); the backward replays the whole forward,
// offloads, all-to-alls and barriers included (A13.7), before the backward.
// Loss (FPDT_LogitsLoss): logits and loss in chunk_tokens/P/32-token chunks without keeping the
// logits, the final hidden states copied to the host synchronously, the fp32 per-token loss
// all-gathered over SP; the backward fetches each chunk, recomputes its logits and takes both
// gradients.
// Approximations: the torch.cat of the per-chunk outputs writes one preallocated buffer; FPDT_FFN is
// GeLU-only in DeepSpeed, a SwiGLU model gets the same chunking with its wider FC1.
#include <array>

#include "sim/workload/context.h"
#include "sim/workload/errors.h"

namespace trainsim::workload {
namespace {

// Bytes of an fp32 value: the attention kernels' log-sum-exp and their dq/dk/dv accumulators
// (flash-attn returns softmax_lse in fp32 and accumulates dq in fp32 in its backward), and the
// layer's weight gradients summed over the chunks in an fp32 buffer, as mixed-precision training
// keeps its gradient accumulators (Megatron's main_grad).
constexpr double kFp32Bytes = 4;

struct Sizes {
  int64_t u, c, cl, hl, kvl, d, b, rows_chunk, qkv_width;
  double e;
  double q;      // one q (or o, or dO) chunk after the all-to-all: e*b*c*h_l*d
  double kv;     // one k (or v) chunk
  double x;      // one local input chunk: e*b*c_l*h
  double lse;    // fp32 log-sum-exp of one chunk
  double dq;     // fp32 dq of one chunk
  double dkv;    // fp32 dk (or dv) of one chunk
  double block;  // this rank's model-FLOPs share of one attention block (forward)
};

Sizes sizes(const BuildContext& ctx) {
  const RankShapes& s = ctx.shapes;
  Sizes z;
  z.u = s.fpdt_chunks;
  z.c = s.fpdt_chunk;
  z.cl = s.fpdt_local_chunk;
  z.hl = s.attn_heads;
  z.kvl = s.attn_kv_heads;
  z.d = s.head_dim;
  z.b = s.batch;
  z.e = s.act_bytes;
  z.rows_chunk = z.b * z.cl;
  z.qkv_width = (s.heads + 2 * s.kv_heads) * s.head_dim;
  const double bc = static_cast<double>(z.b) * z.c;
  z.q = z.e * bc * z.hl * z.d;
  z.kv = z.e * bc * z.kvl * z.d;
  z.x = z.e * z.b * z.cl * s.hidden;
  z.lse = kFp32Bytes * bc * z.hl;
  z.dq = kFp32Bytes * bc * z.hl * z.d;
  z.dkv = kFp32Bytes * bc * z.kvl * z.d;
  z.block = ctx.attention_model_flops / static_cast<double>(z.u * (z.u + 1) / 2);
  return z;
}

// One backward block's gradients added into the fp32 accumulators (DeepSpeed's dq/dk/dv += block
// partials): the partial dq, dk and dv read (q + 2 kv bytes), the dq accumulator and the dk and dv
// accumulators read and written (2 dq + 2 x 2 dkv).
double accumulate_bytes(const Sizes& z) { return z.q + 2 * z.kv + 2 * z.dq + 4 * z.dkv; }

AttentionShape block_shape(const Sizes& z, bool causal) {
  return {static_cast<int32_t>(z.b),
          static_cast<int32_t>(z.hl),
          static_cast<int32_t>(z.kvl),
          static_cast<int32_t>(z.c),
          static_cast<int32_t>(z.c),
          static_cast<int32_t>(z.d),
          static_cast<int32_t>(z.d),
          causal,
          true};
}

// compute_stream.wait_stream(stream); compute_stream.synchronize()
OpId sync(BuildContext& ctx, GraphWriter::Deps deps, int32_t index = -1) {
  return ctx.shapes.fpdt_host_sync ? ctx.w.host_sync(OpLabel::kHostSync, deps, index)
                                   : ctx.w.wait(Stream::kCompute, deps, index);
}

OpId all_to_all(BuildContext& ctx, double bytes, OpId after, int32_t index) {
  return ctx.w.collective(OpLabel::kSpComm, CollectiveKind::kAllToAll, GroupKind::kSp, bytes, Stream::kComm,
                          {after}, index);
}

// With fewer K/V heads than ranks (RankShapes::kv_replication), the pass that repeats one chunk's k and
// v before their all-to-alls, or sums their copies' gradients after them: both tensors once at the
// rank's own heads and once repeated (z.kv is the repeated size). Returns `after` when nothing is
// repeated.
OpId replicate_kv(BuildContext& ctx, const Sizes& z, OpId after, int32_t index) {
  const double copies = static_cast<double>(ctx.shapes.kv_replication);
  if (copies == 1) return after;
  return ctx.w.memory(OpLabel::kQkv, 2 * z.kv * (1 + 1 / copies), {after}, index);
}

OpId barrier(BuildContext& ctx, OpId after, int32_t index) {
  return ctx.w.collective(OpLabel::kBarrier, CollectiveKind::kBarrier, GroupKind::kWorld, 4, Stream::kComm,
                          {after}, index);
}

BufferId gpu(BuildContext& ctx, double bytes, Stream stream, int32_t index = -1) {
  return ctx.w
      .alloc(OpLabel::kChunkBuffer, MemoryCategory::kBuffers, MemorySpace::kHbm, bytes, stream, {}, index)
      .buffer;
}

BufferId host(BuildContext& ctx, double bytes, Stream stream, int32_t index) {
  return ctx.w
      .alloc(OpLabel::kChunkBuffer, MemoryCategory::kActivations, MemorySpace::kHost, bytes, stream, {},
             index)
      .buffer;
}

// An H2D fetch into a new GPU buffer on `stream`; returns the buffer, stores the copy in `ready`.
// The layer input's copies are labelled kLayerInput, the attention's own kFetch and kOffload (the
// attention's are what kernels/fpdt's pipeline issues; tests/kernels compares them).
BufferId fetch(BuildContext& ctx, double bytes, Stream stream, int32_t index, OpId& ready,
               OpLabel label = OpLabel::kFetch) {
  const BufferId b = gpu(ctx, bytes, stream, index);
  ready = ctx.w.copy(label, CopyDirection::kHostToDevice, bytes, stream, {}, index);
  return b;
}

void release_all(GraphWriter& w, std::vector<BufferId>& buffers, Stream stream) {
  for (BufferId& b : buffers) {
    if (b >= 0) w.release(b, stream);
    b = -1;
  }
}

double merge_bytes(const Sizes& z) {
  // Read and write the fp32 output and log-sum-exp, read the block's output and log-sum-exp.
  return 2 * (z.dq + z.lse) + z.q + z.lse;
}

// ---------------------------------------------------------------------------------------------
// Attention forward and backward with offload.

FpdtSaved offload_forward(BuildContext& ctx, bool save) {
  GraphWriter& w = ctx.w;
  const RankShapes& s = ctx.shapes;
  const Sizes z = sizes(ctx);
  FpdtSaved saved;
  for (auto* v : {&saved.x, &saved.q, &saved.k, &saved.v, &saved.o, &saved.lse}) v->assign(z.u, -1);
  std::vector<BufferId> gk(z.u, -1), gv(z.u, -1);
  std::vector<OpId> kv_ready(z.u, kNoOp);
  const OpId norm = w.last(Stream::kCompute);
  int64_t kv_current = 0;
  for (int64_t i = 0; i < z.u; ++i) {
    const int32_t ci = static_cast<int32_t>(i);
    const BufferId qkv = gpu(ctx, z.e * z.rows_chunk * z.qkv_width, Stream::kCompute, ci);
    const OpId gemm = w.gemm(OpLabel::kQkv, GemmPass::kForward, z.rows_chunk, z.qkv_width, s.hidden, {}, ci);
    saved.x[i] = host(ctx, z.x, Stream::kCopyAux, ci);
    w.copy(OpLabel::kLayerInput, CopyDirection::kDeviceToHost, z.x, Stream::kCopyAux, {norm}, ci);
    const BufferId gq = gpu(ctx, z.q, Stream::kCompute, ci);
    gk[i] = gpu(ctx, z.kv, Stream::kCompute, ci);
    gv[i] = gpu(ctx, z.kv, Stream::kCompute, ci);
    all_to_all(ctx, z.q, gemm, ci);
    const OpId kv = replicate_kv(ctx, z, gemm, ci);
    all_to_all(ctx, z.kv, kv, ci);
    all_to_all(ctx, z.kv, kv, ci);
    w.release(qkv, Stream::kComm);
    const OpId bar = barrier(ctx, w.last(Stream::kComm), ci);
    if (s.rope) w.memory(OpLabel::kRope, 2 * (z.q + z.kv), {w.last(Stream::kComm), bar}, ci);
    sync(ctx, {w.last(Stream::kCopy), w.last(Stream::kComm)}, ci);
    const OpId rotated = w.last(Stream::kCompute);
    saved.q[i] = host(ctx, z.q, Stream::kCopy, ci);
    w.copy(OpLabel::kOffload, CopyDirection::kDeviceToHost, z.q, Stream::kCopy, {rotated}, ci);
    saved.k[i] = host(ctx, z.kv, Stream::kCopy, ci);
    w.copy(OpLabel::kOffload, CopyDirection::kDeviceToHost, z.kv, Stream::kCopy, {rotated}, ci);
    saved.v[i] = host(ctx, z.kv, Stream::kCopy, ci);
    w.copy(OpLabel::kOffload, CopyDirection::kDeviceToHost, z.kv, Stream::kCopy, {rotated}, ci);
    // The fp32 output accumulator, and the running log-sum-exp with one block's output and lse.
    const BufferId out = gpu(ctx, z.dq, Stream::kCompute, ci);
    const BufferId acc = gpu(ctx, 2 * z.lse + z.q, Stream::kCompute, ci);
    for (int64_t j = 0; j <= i; ++j) {
      TRAINSIM_WORKLOAD_CHECK(kv_current == j && gk[j] >= 0)
          << "K/V chunk " << j << " not resident for block (" << i << ", " << j << ")";
      const int32_t cj = static_cast<int32_t>(j);
      w.attention(false, block_shape(z, j == i), z.block, {kv_ready[j]}, static_cast<int32_t>(i * z.u + j));
      w.memory(OpLabel::kAttentionMerge, merge_bytes(z), {}, cj);
      bool release_kv = true;
      int64_t next = kv_current;
      if (j != i || i != z.u - 1) {
        next = j != i ? j + 1 : 0;
        if (next == kv_current) {
          release_kv = false;
        } else if (next != i) {
          gk[next] = fetch(ctx, z.kv, Stream::kCopy, static_cast<int32_t>(next), kv_ready[next]);
          gv[next] = fetch(ctx, z.kv, Stream::kCopy, static_cast<int32_t>(next), kv_ready[next]);
        }
      }
      if (i == z.u - 1 && j == z.u - 1) {
        // The backward's device synchronize waits for these copies.
        OpId fetched = kNoOp;
        for (double bytes : {z.q, z.kv, z.kv, z.q, z.lse}) {
          saved.prefetched.push_back(fetch(ctx, bytes, Stream::kCopy, 0, fetched));
        }
      }
      sync(ctx, {w.last(Stream::kCopy)}, cj);
      if (release_kv) {
        w.release(gk[j], Stream::kCompute);
        w.release(gv[j], Stream::kCompute);
        gk[j] = gv[j] = -1;
        kv_ready[j] = kNoOp;
      }
      kv_current = next;
    }
    w.release(gq, Stream::kCompute);
    const OpId merged = w.last(Stream::kCompute);
    all_to_all(ctx, z.q, merged, ci);
    saved.o[i] = host(ctx, z.q, Stream::kCopyAux, ci);
    w.copy(OpLabel::kOffload, CopyDirection::kDeviceToHost, z.q, Stream::kCopyAux, {merged}, ci);
    saved.lse[i] = host(ctx, z.lse, Stream::kCopyAux, ci);
    w.copy(OpLabel::kOffload, CopyDirection::kDeviceToHost, z.lse, Stream::kCopyAux, {merged}, ci);
    w.release(out, Stream::kCopyAux);
    w.release(acc, Stream::kCopyAux);
  }
  sync(ctx, {w.last(Stream::kCopyAux), w.last(Stream::kComm)});
  for (int64_t j = 0; j < z.u; ++j) {
    TRAINSIM_WORKLOAD_CHECK(gk[j] < 0 && gv[j] < 0) << "K/V chunk " << j << " left on the GPU";
  }
  if (!save) {
    for (auto* v : {&saved.x, &saved.q, &saved.k, &saved.v, &saved.o, &saved.lse})
      release_all(w, *v, Stream::kCompute);
    release_all(w, saved.prefetched, Stream::kCompute);
  }
  return saved;
}

// Returns the op after which the QKV input gradient (the layer-norm output gradient) is complete.
OpId offload_backward(BuildContext& ctx, FpdtSaved& saved, OpId grad_ready) {
  GraphWriter& w = ctx.w;
  const RankShapes& s = ctx.shapes;
  const Sizes z = sizes(ctx);
  const int64_t u = z.u;
  std::vector<BufferId> gx(u, -1), gq(u, -1), gk(u, -1), gv(u, -1), go(u, -1), glse(u, -1), gdo(u, -1),
      gdq(u, -1);
  std::vector<BufferId> hdo(u, -1), hdq(u, -1);
  std::vector<OpId> q_ready(u, kNoOp), kv_ready(u, kNoOp), x_ready(u, kNoOp);
  TRAINSIM_WORKLOAD_CHECK(saved.prefetched.size() == 5) << "Q0/K0/V0/O0/LSE0 not prefetched";
  gq[0] = saved.prefetched[0];
  gk[0] = saved.prefetched[1];
  gv[0] = saved.prefetched[2];
  go[0] = saved.prefetched[3];
  glse[0] = saved.prefetched[4];
  saved.prefetched.clear();

  // Setup.
  gx[0] = fetch(ctx, z.x, Stream::kCopyAux, 0, x_ready[0], OpLabel::kLayerInput);
  const LayerParams& p = ctx.params;
  const BufferId grad_weights = gpu(ctx, kFp32Bytes * (p.qkv_weight + p.qkv_bias), Stream::kCopyAux);
  gdo[0] = gpu(ctx, z.q, Stream::kCompute, 0);
  all_to_all(ctx, z.q, grad_ready, 0);
  w.host_sync(OpLabel::kHostSync, {w.last(Stream::kComm), w.last(Stream::kCopy), w.last(Stream::kCopyAux)});
  hdo[0] = host(ctx, z.q, Stream::kCopy, 0);
  w.copy(OpLabel::kOffload, CopyDirection::kDeviceToHost, z.q, Stream::kCopy, {}, 0);
  gdq[0] = gpu(ctx, z.dq, Stream::kCopy, 0);
  for (int64_t k = 1; k < u; ++k) hdq[k] = host(ctx, z.dq, Stream::kCopy, static_cast<int32_t>(k));
  const BufferId dkv_acc = gpu(ctx, 2 * z.dkv, Stream::kCopy);
  const BufferId grad_x = w.alloc(OpLabel::kChunkBuffer, MemoryCategory::kActivations, MemorySpace::kHbm,
                                  z.x * static_cast<double>(u), Stream::kCompute)
                              .buffer;

  int64_t q_current = 0, last_accumulated = 0, next_q = 0;
  OpId wgrad = kNoOp;
  for (int64_t i = 0; i < u; ++i) {
    const int32_t ci = static_cast<int32_t>(i);
    for (int64_t q = i; q < u; ++q) {
      TRAINSIM_WORKLOAD_CHECK(q_current == q && gq[q] >= 0 && gdq[q] >= 0 && gdo[q] >= 0 && gk[i] >= 0)
          << "chunk state for backward block (" << i << ", " << q << ")";
      const int32_t cq = static_cast<int32_t>(q);
      const BufferId partial = gpu(ctx, z.q + 2 * z.kv, Stream::kCompute, cq);
      const OpId block = w.attention(true, block_shape(z, q == i), 2 * z.block, {q_ready[q], kv_ready[i]},
                                     static_cast<int32_t>(i * u + q));
      if (i != u - 1) next_q = q != u - 1 ? q + 1 : i + 1;
      const bool release_q = next_q != q_current;
      if (release_q) {
        if ((i > 0 || q > 0) && last_accumulated != i) {
          w.release(gdq[last_accumulated], Stream::kCopy);
          gdq[last_accumulated] = -1;
        }
        const int32_t cn = static_cast<int32_t>(next_q);
        gdq[next_q] = fetch(ctx, z.dq, Stream::kCopy, cn, q_ready[next_q]);
        gq[next_q] = fetch(ctx, z.q, Stream::kCopy, cn, q_ready[next_q]);
        go[next_q] = fetch(ctx, z.q, Stream::kCopy, cn, q_ready[next_q]);
        glse[next_q] = fetch(ctx, z.lse, Stream::kCopy, cn, q_ready[next_q]);
        if (hdo[next_q] >= 0) {
          gdo[next_q] = fetch(ctx, z.q, Stream::kCopy, cn, q_ready[next_q]);
        } else {
          // First outer pass: the output gradient's all-to-all for this chunk, then a barrier; the
          // chunk is offloaded with its GPU copy in use.
          gdo[next_q] = gpu(ctx, z.q, Stream::kCopy, cn);
          const OpId a2a = all_to_all(ctx, z.q, w.last(Stream::kCopy), cn);
          barrier(ctx, a2a, cn);
          hdo[next_q] = host(ctx, z.q, Stream::kCopy, cn);
          q_ready[next_q] = w.copy(OpLabel::kOffload, CopyDirection::kDeviceToHost, z.q, Stream::kCopy,
                                   {w.last(Stream::kComm)}, cn);
        }
      }
      sync(ctx, {w.last(Stream::kCopy), w.last(Stream::kComm)}, cq);
      const OpId accumulate = w.memory(OpLabel::kGradAccumulate, accumulate_bytes(z), {block}, cq);
      w.release(partial, Stream::kCompute);
      w.copy(OpLabel::kOffload, CopyDirection::kDeviceToHost, z.dq, Stream::kCopy, {accumulate}, cq);
      if (release_q) {
        for (std::vector<BufferId>* v : {&gq, &go, &glse, &gdo}) {
          w.release((*v)[q], Stream::kCompute);
          (*v)[q] = -1;
        }
      }
      last_accumulated = q;
      q_current = next_q;
    }
    sync(ctx, {w.last(Stream::kCopy)}, ci);
    if (s.rope) w.memory(OpLabel::kRope, 2 * (z.q + z.kv) + z.dq + z.dkv, {}, ci);
    const OpId grads_ready = w.last(Stream::kCompute);
    const BufferId gathered = gpu(ctx, z.e * z.rows_chunk * z.qkv_width, Stream::kCompute, ci);
    all_to_all(ctx, z.q, grads_ready, ci);
    all_to_all(ctx, z.kv, grads_ready, ci);
    replicate_kv(ctx, z, all_to_all(ctx, z.kv, grads_ready, ci), ci);
    w.host_sync(OpLabel::kHostSync, {w.last(Stream::kCopyAux)}, ci);
    const OpId bar = barrier(ctx, w.last(Stream::kComm), ci);
    const int64_t q_width = s.heads * s.head_dim, kv_width = s.kv_heads * s.head_dim;
    for (int64_t width : {q_width, kv_width, kv_width}) {
      wgrad =
          w.gemm(OpLabel::kQkv, GemmPass::kWeightGrad, width, s.hidden, z.rows_chunk, {bar, x_ready[i]}, ci);
    }
    for (int64_t width : {q_width, kv_width, kv_width}) {
      w.gemm(OpLabel::kQkv, GemmPass::kInputGrad, z.rows_chunk, s.hidden, width, {}, ci);
    }
    w.release(gathered, Stream::kCompute);
    w.release(gdq[i], Stream::kCompute);
    gdq[i] = -1;
    if (i != u - 1) {
      const int32_t cn = static_cast<int32_t>(i + 1);
      gk[i + 1] = fetch(ctx, z.kv, Stream::kCopy, cn, kv_ready[i + 1]);
      gv[i + 1] = fetch(ctx, z.kv, Stream::kCopy, cn, kv_ready[i + 1]);
      gx[i + 1] = fetch(ctx, z.x, Stream::kCopyAux, cn, x_ready[i + 1], OpLabel::kLayerInput);
    }
    sync(ctx, {w.last(Stream::kCopy)}, ci);
    for (std::vector<BufferId>* v : {&gx, &gk, &gv}) {
      w.release((*v)[i], Stream::kCompute);
      (*v)[i] = -1;
    }
  }
  ctx.grads.produced(wgrad, p.qkv_weight + p.qkv_bias);
  for (std::vector<BufferId>* v : {&gq, &go, &glse, &gdo, &gdq}) release_all(w, *v, Stream::kCompute);
  w.release(dkv_acc, Stream::kCompute);
  w.release(grad_weights, Stream::kCompute);
  release_all(w, hdo, Stream::kCompute);
  release_all(w, hdq, Stream::kCompute);
  for (auto* v : {&saved.x, &saved.q, &saved.k, &saved.v, &saved.o, &saved.lse})
    release_all(w, *v, Stream::kCompute);
  const OpId done = w.last(Stream::kCompute);
  w.release(grad_x, Stream::kCompute);
  return done;
}

// ---------------------------------------------------------------------------------------------
// Attention forward and backward without offload.

FpdtSaved gpu_forward(BuildContext& ctx, bool save) {
  GraphWriter& w = ctx.w;
  const RankShapes& s = ctx.shapes;
  const Sizes z = sizes(ctx);
  FpdtSaved saved;
  for (auto* v : {&saved.q, &saved.k, &saved.v, &saved.o, &saved.lse}) v->assign(z.u, -1);
  for (int64_t i = 0; i < z.u; ++i) {
    const int32_t ci = static_cast<int32_t>(i);
    const BufferId qkv = gpu(ctx, z.e * z.rows_chunk * z.qkv_width, Stream::kCompute, ci);
    const OpId gemm = w.gemm(OpLabel::kQkv, GemmPass::kForward, z.rows_chunk, z.qkv_width, s.hidden, {}, ci);
    saved.q[i] = gpu(ctx, z.q, Stream::kCompute, ci);
    saved.k[i] = gpu(ctx, z.kv, Stream::kCompute, ci);
    saved.v[i] = gpu(ctx, z.kv, Stream::kCompute, ci);
    all_to_all(ctx, z.q, gemm, ci);
    const OpId kv = replicate_kv(ctx, z, gemm, ci);
    all_to_all(ctx, z.kv, kv, ci);
    const OpId v = all_to_all(ctx, z.kv, kv, ci);
    w.release(qkv, Stream::kComm);
    if (s.rope) w.memory(OpLabel::kRope, 2 * (z.q + z.kv), {v}, ci);
    const BufferId out = gpu(ctx, z.dq, Stream::kCompute, ci);
    const BufferId acc = gpu(ctx, 2 * z.lse + z.q, Stream::kCompute, ci);
    saved.lse[i] = gpu(ctx, z.lse, Stream::kCompute, ci);
    for (int64_t j = 0; j <= i; ++j) {
      w.attention(false, block_shape(z, j == i), z.block, {v}, static_cast<int32_t>(i * z.u + j));
      w.memory(OpLabel::kAttentionMerge, merge_bytes(z), {}, static_cast<int32_t>(j));
    }
    saved.o[i] = gpu(ctx, z.q, Stream::kCompute, ci);  // the output cast to the training dtype
    w.memory(OpLabel::kAttentionMerge, z.dq + z.q, {}, ci);
    w.release(out, Stream::kCompute);
    w.release(acc, Stream::kCompute);
  }
  for (int64_t i = 0; i < z.u; ++i) all_to_all(ctx, z.q, w.last(Stream::kCompute), static_cast<int32_t>(i));
  w.wait(Stream::kCompute, {w.last(Stream::kComm)});
  if (!save) {
    for (auto* v : {&saved.q, &saved.k, &saved.v, &saved.o, &saved.lse}) release_all(w, *v, Stream::kCompute);
  }
  return saved;
}

OpId gpu_backward(BuildContext& ctx, FpdtSaved& saved, OpId grad_ready) {
  GraphWriter& w = ctx.w;
  const RankShapes& s = ctx.shapes;
  const Sizes z = sizes(ctx);
  const int64_t u = z.u;
  const LayerParams& p = ctx.params;
  const BufferId grad_weights = gpu(ctx, kFp32Bytes * (p.qkv_weight + p.qkv_bias), Stream::kCompute);
  const BufferId grad_x = w.alloc(OpLabel::kChunkBuffer, MemoryCategory::kActivations, MemorySpace::kHbm,
                                  z.x * static_cast<double>(u), Stream::kCompute)
                              .buffer;
  std::vector<BufferId> gdo(u, -1);
  for (int64_t i = 0; i < u; ++i) {
    gdo[i] = gpu(ctx, z.q, Stream::kCompute, static_cast<int32_t>(i));
    all_to_all(ctx, z.q, grad_ready, static_cast<int32_t>(i));
  }
  // DeepSpeed allocates dq, dk and dv for every chunk, all with the shape of a q chunk.
  const BufferId dqkv = gpu(ctx, 3 * z.dq * static_cast<double>(u), Stream::kCompute);
  const OpId grads_in = w.last(Stream::kComm);
  const int64_t q_width = s.heads * s.head_dim, kv_width = s.kv_heads * s.head_dim;
  OpId wgrad = kNoOp;
  for (int64_t i = 0; i < u; ++i) {
    const int32_t ci = static_cast<int32_t>(i);
    for (int64_t q = i; q < u; ++q) {
      const BufferId partial = gpu(ctx, z.q + 2 * z.kv, Stream::kCompute, static_cast<int32_t>(q));
      w.attention(true, block_shape(z, q == i), 2 * z.block, {grads_in}, static_cast<int32_t>(i * u + q));
      w.memory(OpLabel::kGradAccumulate, accumulate_bytes(z), {}, static_cast<int32_t>(q));
      w.release(partial, Stream::kCompute);
    }
    if (s.rope) w.memory(OpLabel::kRope, z.kv + z.dkv, {}, ci);
    const OpId ready = w.last(Stream::kCompute);
    all_to_all(ctx, z.kv, ready, ci);
    const OpId dv = replicate_kv(ctx, z, all_to_all(ctx, z.kv, ready, ci), ci);
    for (int64_t k = 0; k < 2; ++k) {
      wgrad = w.gemm(OpLabel::kQkv, GemmPass::kWeightGrad, kv_width, s.hidden, z.rows_chunk, {dv}, ci);
    }
    for (int64_t k = 0; k < 2; ++k)
      w.gemm(OpLabel::kQkv, GemmPass::kInputGrad, z.rows_chunk, s.hidden, kv_width, {}, ci);
  }
  for (int64_t i = 0; i < u; ++i) {
    const int32_t ci = static_cast<int32_t>(i);
    if (s.rope) w.memory(OpLabel::kRope, z.q + z.dq, {}, ci);
    const OpId dq = all_to_all(ctx, z.q, w.last(Stream::kCompute), ci);
    wgrad = w.gemm(OpLabel::kQkv, GemmPass::kWeightGrad, q_width, s.hidden, z.rows_chunk, {dq}, ci);
    w.gemm(OpLabel::kQkv, GemmPass::kInputGrad, z.rows_chunk, s.hidden, q_width, {}, ci);
  }
  ctx.grads.produced(wgrad, p.qkv_weight + p.qkv_bias);
  w.release(dqkv, Stream::kCompute);
  release_all(w, gdo, Stream::kCompute);
  w.release(grad_weights, Stream::kCompute);
  for (auto* v : {&saved.q, &saved.k, &saved.v, &saved.o, &saved.lse}) release_all(w, *v, Stream::kCompute);
  const OpId done = w.last(Stream::kCompute);
  w.release(grad_x, Stream::kCompute);
  return done;
}

// ---------------------------------------------------------------------------------------------
// The layer.

struct ForwardResult {
  BufferId output = -1;
  FpdtSaved saved;
};

void ffn_forward(BuildContext& ctx) {
  GraphWriter& w = ctx.w;
  const RankShapes& s = ctx.shapes;
  const int64_t chunks = s.tokens / s.fpdt_ffn_chunk;
  const int64_t rows = s.batch * s.fpdt_ffn_chunk;
  const int64_t fc1_width = s.ffn * (s.swiglu ? 2 : 1);
  for (int64_t i = 0; i < chunks; ++i) {
    const int32_t ci = static_cast<int32_t>(i);
    const BufferId ws =
        w.alloc(OpLabel::kWorkspace, MemoryCategory::kBuffers, MemorySpace::kHbm,
                static_cast<double>(s.act_bytes) * rows * (fc1_width + s.ffn), Stream::kCompute)
            .buffer;
    w.gemm(OpLabel::kFc1, GemmPass::kForward, rows, fc1_width, s.hidden, {}, ci);
    w.memory(OpLabel::kActivation, static_cast<double>(s.act_bytes) * rows * (fc1_width + s.ffn), {}, ci);
    w.gemm(OpLabel::kFc2, GemmPass::kForward, rows, s.hidden, s.ffn, {}, ci);
    w.release(ws, Stream::kCompute);
  }
}

void ffn_backward(BuildContext& ctx, int32_t layer, int32_t micro_batch) {
  GraphWriter& w = ctx.w;
  const RankShapes& s = ctx.shapes;
  const LayerParams& p = ctx.params;
  const int64_t chunks = s.tokens / s.fpdt_ffn_chunk;
  const int64_t rows = s.batch * s.fpdt_ffn_chunk;
  const int64_t fc1_width = s.ffn * (s.swiglu ? 2 : 1);
  const double e = s.act_bytes;
  const BufferId grads =
      w.alloc(OpLabel::kWorkspace, MemoryCategory::kBuffers, MemorySpace::kHbm,
              kFp32Bytes * (p.fc1_weight + p.fc1_bias + p.fc2_weight + p.fc2_bias), Stream::kCompute)
          .buffer;
  OpId last = kNoOp;
  for (int64_t i = 0; i < chunks; ++i) {
    const int32_t ci = static_cast<int32_t>(i);
    const BufferId ws = w.alloc(OpLabel::kWorkspace, MemoryCategory::kBuffers, MemorySpace::kHbm,
                                e * rows * (2 * fc1_width + s.ffn), Stream::kCompute)
                            .buffer;
    w.set_position({Phase::kRecompute, layer, micro_batch});
    w.gemm(OpLabel::kFc1, GemmPass::kForward, rows, fc1_width, s.hidden, {}, ci);
    w.set_position({Phase::kBackward, layer, micro_batch});
    w.memory(OpLabel::kActivation, e * rows * (fc1_width + 2 * s.ffn), {}, ci);
    w.gemm(OpLabel::kFc2, GemmPass::kWeightGrad, s.hidden, s.ffn, rows, {}, ci);
    w.gemm(OpLabel::kFc2, GemmPass::kInputGrad, rows, s.ffn, s.hidden, {}, ci);
    w.memory(OpLabel::kActivation, e * rows * (s.ffn + 2 * fc1_width), {}, ci);
    w.gemm(OpLabel::kFc1, GemmPass::kWeightGrad, fc1_width, s.hidden, rows, {}, ci);
    last = w.gemm(OpLabel::kFc1, GemmPass::kInputGrad, rows, s.hidden, fc1_width, {}, ci);
    w.release(ws, Stream::kCompute);
  }
  ctx.grads.produced(last, p.fc1_weight + p.fc1_bias + p.fc2_weight + p.fc2_bias);
  w.release(grads, Stream::kCompute);
}

ForwardResult fpdt_forward(BuildContext& ctx, OpId input_ready, OpId params, bool save) {
  GraphWriter& w = ctx.w;
  const RankShapes& s = ctx.shapes;
  const bool recompute = w.position().phase == Phase::kRecompute;
  const double hidden = s.hidden_bytes();
  const double attention_out = static_cast<double>(s.act_bytes) * s.batch * s.tokens * s.heads * s.head_dim;
  const double mask = s.dropout ? static_cast<double>(s.batch) * s.tokens * s.hidden : 0.0;
  ForwardResult r;
  const BufferId ln_out = w.alloc(OpLabel::kActivationStash, MemoryCategory::kActivations, MemorySpace::kHbm,
                                  hidden, Stream::kCompute)
                              .buffer;
  w.memory(OpLabel::kNorm, 2 * hidden, {input_ready, params});
  const BufferId final_out = w.alloc(OpLabel::kActivationStash, MemoryCategory::kActivations,
                                     MemorySpace::kHbm, attention_out, Stream::kCompute)
                                 .buffer;
  r.saved = s.fpdt_offload ? offload_forward(ctx, save) : gpu_forward(ctx, save);
  if (save && !s.fpdt_offload) {
    r.saved.ln_out = ln_out;
  } else {
    w.release(ln_out, Stream::kCompute);
  }
  w.gemm(OpLabel::kProjection, GemmPass::kForward, s.batch * s.tokens, s.hidden, s.heads * s.head_dim,
         {w.last(Stream::kComm)});
  const BufferId ln2_in = w.alloc(OpLabel::kActivationStash, MemoryCategory::kActivations, MemorySpace::kHbm,
                                  hidden, Stream::kCompute)
                              .buffer;
  w.memory(OpLabel::kResidual, 3 * hidden + mask);
  const BufferId ln2_out = w.alloc(OpLabel::kActivationStash, MemoryCategory::kActivations, MemorySpace::kHbm,
                                   hidden, Stream::kCompute)
                               .buffer;
  w.memory(OpLabel::kNorm, 2 * hidden);
  ffn_forward(ctx);
  if (!recompute) {
    r.output = w.alloc(OpLabel::kLayerInput, MemoryCategory::kActivations, MemorySpace::kHbm, hidden,
                       Stream::kCompute)
                   .buffer;
  }
  w.memory(OpLabel::kResidual, 3 * hidden + mask);
  if (save) {
    r.saved.final_out = final_out;
    r.saved.ln2_in = ln2_in;
    r.saved.ln2_out = ln2_out;
  } else {
    for (BufferId b : {final_out, ln2_in, ln2_out}) w.release(b, Stream::kCompute);
  }
  return r;
}

}  // namespace

BufferId fpdt_layer_forward(BuildContext& ctx, int64_t layer, int64_t micro_batch, BufferId input,
                            OpId input_ready) {
  const auto [params, state] = open_layer_forward(ctx, layer, micro_batch, input, input_ready,
                                                  ctx.params.total(), ctx.shapes.hidden_bytes());
  const bool save = ctx.shapes.recompute != config::Recompute::kFull;
  ForwardResult r = fpdt_forward(ctx, input_ready, params, save);
  state.fpdt = std::move(r.saved);
  close_layer_forward(ctx, state);
  return r.output;
}

OpId fpdt_layer_backward(BuildContext& ctx, int64_t layer, int64_t micro_batch, OpId grad_ready) {
  GraphWriter& w = ctx.w;
  const RankShapes& s = ctx.shapes;
  const LayerParams& p = ctx.params;
  auto [state, params] = open_layer_backward(ctx, layer, micro_batch, p.total());
  const int32_t l32 = static_cast<int32_t>(layer), mb32 = static_cast<int32_t>(micro_batch);
  const double hidden = s.hidden_bytes();
  if (s.recompute == config::Recompute::kFull) {
    fetch_checkpointed_input(ctx, state, hidden);
    w.set_position({Phase::kRecompute, l32, mb32});
    state.fpdt = fpdt_forward(ctx, grad_ready, params, true).saved;
    w.set_position({Phase::kBackward, l32, mb32});
  }
  FpdtSaved& saved = state.fpdt;
  const BufferId grad = w.alloc(OpLabel::kWorkspace, MemoryCategory::kBuffers, MemorySpace::kHbm, 2 * hidden,
                                Stream::kCompute, {grad_ready, params})
                            .buffer;
  ffn_backward(ctx, l32, mb32);
  w.release(saved.ln2_out, Stream::kCompute);
  ctx.grads.produced(w.memory(OpLabel::kNorm, 3 * hidden), p.norms / 2);
  w.memory(OpLabel::kResidual, 3 * hidden);
  w.release(saved.ln2_in, Stream::kCompute);
  const int64_t rows = s.batch * s.tokens, width = s.heads * s.head_dim;
  w.gemm(OpLabel::kProjection, GemmPass::kInputGrad, rows, width, s.hidden);
  ctx.grads.produced(w.gemm(OpLabel::kProjection, GemmPass::kWeightGrad, width, s.hidden, rows),
                     p.proj_weight + p.proj_bias);
  w.release(saved.final_out, Stream::kCompute);
  const OpId attention_grad = w.last(Stream::kCompute);
  const OpId dx = s.fpdt_offload ? offload_backward(ctx, saved, attention_grad)
                                 : gpu_backward(ctx, saved, attention_grad);
  if (saved.ln_out >= 0) w.release(saved.ln_out, Stream::kCompute);
  ctx.grads.produced(w.memory(OpLabel::kNorm, 3 * hidden, {dx}), p.norms / 2);
  const OpId done = w.memory(OpLabel::kResidual, 3 * hidden);
  w.release(grad, Stream::kCompute);
  w.release(state.input, Stream::kCompute);
  if (state.host_input >= 0) w.release(state.host_input, Stream::kCompute);
  if (ctx.zero3) ctx.zero3->release(done);
  return done;
}

void fpdt_head_forward(BuildContext& ctx, int64_t micro_batch, BufferId input, OpId input_ready) {
  GraphWriter& w = ctx.w;
  const RankShapes& s = ctx.shapes;
  w.set_position({Phase::kForward, -1, static_cast<int32_t>(micro_batch)});
  const OpId params = ctx.zero3 ? ctx.zero3->acquire(head_unit_elements(s), false) : kNoOp;
  LayerState& state = ctx.state(-1, micro_batch);
  state.input = input;
  const double hidden = s.hidden_bytes();
  const BufferId normed =
      w.alloc(OpLabel::kWorkspace, MemoryCategory::kBuffers, MemorySpace::kHbm, hidden, Stream::kCompute)
          .buffer;
  w.memory(OpLabel::kFinalNorm, 2 * hidden, {input_ready, params});
  const int64_t chunks = s.tokens / s.fpdt_loss_chunk;
  const int64_t rows = s.batch * s.fpdt_loss_chunk;
  const double logits = static_cast<double>(rows) * s.vocab;
  for (int64_t i = 0; i < chunks; ++i) {
    const int32_t ci = static_cast<int32_t>(i);
    const BufferId ws = w.alloc(OpLabel::kLogits, MemoryCategory::kBuffers, MemorySpace::kHbm,
                                logits * (s.act_bytes + 8.0), Stream::kCompute)
                            .buffer;
    w.gemm(OpLabel::kLmHead, GemmPass::kForward, rows, s.vocab, s.hidden, {}, ci);
    w.memory(OpLabel::kLoss, logits * (s.act_bytes + 16.0), {}, ci);
    w.release(ws, Stream::kCompute);
  }
  // lm_output.to('cpu') for the backward: a synchronous copy.
  state.host_input = w.alloc(OpLabel::kCheckpoint, MemoryCategory::kActivations, MemorySpace::kHost, hidden,
                             Stream::kCompute)
                         .buffer;
  w.copy(OpLabel::kOffload, CopyDirection::kDeviceToHost, hidden, Stream::kCompute);
  w.release(normed, Stream::kCompute);
  w.collective(OpLabel::kLossComm, CollectiveKind::kAllGather, GroupKind::kSp, kFp32Bytes * s.batch * s.seq,
               Stream::kComm, {w.last(Stream::kCompute)});
  if (ctx.zero3) ctx.zero3->release(kNoOp);
}

OpId fpdt_head_backward(BuildContext& ctx, int64_t micro_batch) {
  GraphWriter& w = ctx.w;
  const RankShapes& s = ctx.shapes;
  const int32_t mb32 = static_cast<int32_t>(micro_batch);
  w.set_position({Phase::kBackward, -1, mb32});
  const auto it = ctx.saved.find({-1, micro_batch});
  TRAINSIM_WORKLOAD_CHECK(it != ctx.saved.end())
      << "FPDT loss backward of mb " << micro_batch << " before forward";
  const LayerState state = it->second;
  ctx.saved.erase(it);
  const OpId params = ctx.zero3 ? ctx.zero3->acquire(head_unit_elements(s), true) : kNoOp;
  const BufferId grad_weight = w.alloc(OpLabel::kWorkspace, MemoryCategory::kBuffers, MemorySpace::kHbm,
                                       kFp32Bytes * s.vocab * s.hidden, Stream::kCompute, {params})
                                   .buffer;
  const int64_t chunks = s.tokens / s.fpdt_loss_chunk;
  const int64_t rows = s.batch * s.fpdt_loss_chunk;
  const double logits = static_cast<double>(rows) * s.vocab;
  const double chunk_bytes = static_cast<double>(s.act_bytes) * rows * s.hidden;
  OpId wgrad = kNoOp;
  for (int64_t i = 0; i < chunks; ++i) {
    const int32_t ci = static_cast<int32_t>(i);
    const BufferId chunk = w.alloc(OpLabel::kWorkspace, MemoryCategory::kBuffers, MemorySpace::kHbm,
                                   chunk_bytes, Stream::kCompute)
                               .buffer;
    w.copy(OpLabel::kFetch, CopyDirection::kHostToDevice, chunk_bytes, Stream::kCompute, {}, ci);
    const BufferId ws = w.alloc(OpLabel::kLogits, MemoryCategory::kBuffers, MemorySpace::kHbm,
                                logits * (s.act_bytes + 8.0), Stream::kCompute)
                            .buffer;
    w.set_position({Phase::kRecompute, -1, mb32});
    w.gemm(OpLabel::kLmHead, GemmPass::kForward, rows, s.vocab, s.hidden, {}, ci);
    w.set_position({Phase::kBackward, -1, mb32});
    w.memory(OpLabel::kLoss, logits * (s.act_bytes + 12.0), {}, ci);
    w.gemm(OpLabel::kLmHead, GemmPass::kInputGrad, rows, s.hidden, s.vocab, {}, ci);
    wgrad = w.gemm(OpLabel::kLmHead, GemmPass::kWeightGrad, s.vocab, s.hidden, rows, {}, ci);
    w.release(ws, Stream::kCompute);
    w.release(chunk, Stream::kCompute);
  }
  const bool owns_matrix = !s.tied_embeddings || !s.head_beside_embedding();
  ctx.grads.produced(wgrad, owns_matrix ? s.vocab * s.hidden : 0);
  w.release(grad_weight, Stream::kCompute);
  const OpId done = w.memory(OpLabel::kFinalNorm, 3 * s.hidden_bytes());
  ctx.grads.produced(done, norm_params(s));
  w.release(state.host_input, Stream::kCompute);
  w.release(state.input, Stream::kCompute);
  if (ctx.zero3) ctx.zero3->release(done);
  return done;
}

}  // namespace trainsim::workload
