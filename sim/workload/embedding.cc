// Embedding, final norm, LM head and loss (Megatron-LM language_model.py, tensor_parallel/layers.py
// VocabParallelEmbedding, tensor_parallel/cross_entropy.py).
//
// Embedding: each TP rank looks up the tokens that fall in its vocabulary shard and the partial
// results are all-reduced over TP (reduce-scattered into the sequence shards under Megatron-SP);
// learned position embeddings are added; GPT-style models apply dropout. Backward: the gradient
// (all-gathered under SP) is scatter-added into the embedding gradient.
// Head: final norm, [SP: all-gather], the logits GEMM against this rank's vocabulary shard, and the
// vocab-parallel cross entropy: 3 all-reduces of one fp32 value per token over TP (max logit,
// target logit, sum of exponentials). The fp32 softmax is kept for the backward. Context
// parallelism all-reduces the loss sum over the CP group (2 floats); DeepSpeed-Ulysses
// (Megatron-DeepSpeed vocab-sequence-parallel cross entropy) all-gathers the per-token fp32 loss
// over the SP group, as FPDT does. Backward: the logits input and weight gradients, then the input
// gradient's all-reduce over TP (reduce-scatter under SP) and the final norm.
#include "sim/workload/context.h"
#include "sim/workload/errors.h"

namespace trainsim::workload {

int64_t embedding_unit_elements(const RankShapes& s) { return embedding_params(s); }

int64_t head_unit_elements(const RankShapes& s) {
  const bool reuses_embedding = s.tied_embeddings && s.pp == 1;
  return head_params(s) + (reuses_embedding ? s.vocab_local * s.hidden : 0);
}

EmbeddingOutput embedding_forward(BuildContext& ctx, int64_t micro_batch) {
  GraphWriter& w = ctx.w;
  const RankShapes& s = ctx.shapes;
  w.set_position({Phase::kForward, -1, static_cast<int32_t>(micro_batch)});
  const OpId params = ctx.zero3 ? ctx.zero3->acquire(embedding_unit_elements(s), false) : kNoOp;
  const double hg = s.hidden_bytes();
  const double hn = s.hidden_norm_bytes();
  const BufferId output =
      w.alloc(OpLabel::kLayerInput, MemoryCategory::kActivations, MemorySpace::kHbm, hn, Stream::kCompute)
          .buffer;
  w.memory(OpLabel::kEmbedding, hg * (s.learned_positions ? 3 : 2), {params});
  const CollectiveKind reduce = s.megatron_sp ? CollectiveKind::kReduceScatter : CollectiveKind::kAllReduce;
  const OpId r =
      w.collective(OpLabel::kTpComm, reduce, GroupKind::kTp, hg, Stream::kComm, {w.last(Stream::kCompute)});
  OpId ready = r;
  if (s.dropout) {
    w.memory(OpLabel::kEmbedding, 2 * hn + static_cast<double>(s.batch) * s.tokens_norm * s.hidden, {r});
    ready = kNoOp;
  }
  if (ctx.zero3) ctx.zero3->release(kNoOp);
  return {output, ready};
}

OpId embedding_backward(BuildContext& ctx, int64_t micro_batch, OpId grad_ready) {
  GraphWriter& w = ctx.w;
  const RankShapes& s = ctx.shapes;
  w.set_position({Phase::kBackward, -1, static_cast<int32_t>(micro_batch)});
  const OpId params = ctx.zero3 ? ctx.zero3->acquire(embedding_unit_elements(s), true) : kNoOp;
  const OpId g = s.megatron_sp ? w.collective(OpLabel::kTpComm, CollectiveKind::kAllGather, GroupKind::kTp,
                                              s.hidden_bytes(), Stream::kComm, {grad_ready})
                               : kNoOp;
  const OpId done = w.memory(OpLabel::kEmbedding, 2 * s.hidden_bytes(), {grad_ready, g, params});
  gradients_done(ctx, done, embedding_params(s));
  if (ctx.zero3) ctx.zero3->release(done);
  return done;
}

void head_forward(BuildContext& ctx, int64_t micro_batch, BufferId input, OpId input_ready) {
  const RankShapes& s = ctx.shapes;
  if (s.scheme.chunked) return fpdt_head_forward(ctx, micro_batch, input, input_ready);
  GraphWriter& w = ctx.w;
  w.set_position({Phase::kForward, -1, static_cast<int32_t>(micro_batch)});
  const OpId params = ctx.zero3 ? ctx.zero3->acquire(head_unit_elements(s), false) : kNoOp;
  const int64_t rows = s.batch * s.tokens;
  const double logits = static_cast<double>(rows) * s.vocab_local;
  const double per_token = 4.0 * rows;  // one fp32 value per token
  LayerState& state = ctx.state(-1, micro_batch);
  state.input = input;
  w.memory(OpLabel::kFinalNorm, 2 * s.hidden_norm_bytes(), {input_ready, params});
  const OpId x = s.megatron_sp ? w.collective(OpLabel::kTpComm, CollectiveKind::kAllGather, GroupKind::kTp,
                                              s.hidden_bytes(), Stream::kComm, {w.last(Stream::kCompute)})
                               : kNoOp;
  state.stash =
      w.alloc(OpLabel::kLogits, MemoryCategory::kActivations, MemorySpace::kHbm, 4 * logits, Stream::kCompute)
          .buffer;
  const BufferId scratch = w.alloc(OpLabel::kLogits, MemoryCategory::kBuffers, MemorySpace::kHbm,
                                   s.act_bytes * logits, Stream::kCompute)
                               .buffer;
  w.gemm(OpLabel::kLmHead, GemmPass::kForward, rows, s.vocab_local, s.hidden, {x});
  // Max logit, target logit, sum of exponentials: each a pass over the logits and an all-reduce.
  OpId reduced = kNoOp;
  for (int k = 0; k < 3; ++k) {
    const OpId pass =
        w.memory(OpLabel::kLoss, logits * (k == 2 ? s.act_bytes + 8.0 : s.act_bytes), {reduced}, k);
    reduced = w.collective(OpLabel::kTpComm, CollectiveKind::kAllReduce, GroupKind::kTp, per_token,
                           Stream::kComm, {pass}, k);
  }
  w.memory(OpLabel::kLoss, 3 * per_token, {reduced});
  w.release(scratch, Stream::kCompute);
  if (s.scheme.sp_group && !s.scheme.gathers_token_losses) {
    w.collective(OpLabel::kLossComm, CollectiveKind::kAllReduce, GroupKind::kSp, 8, Stream::kComm,
                 {w.last(Stream::kCompute)});
  } else if (s.scheme.gathers_token_losses) {
    w.collective(OpLabel::kLossComm, CollectiveKind::kAllGather, GroupKind::kSp, 4.0 * s.batch * s.seq,
                 Stream::kComm, {w.last(Stream::kCompute)});
  }
  if (ctx.zero3) ctx.zero3->release(kNoOp);
}

OpId head_backward(BuildContext& ctx, int64_t micro_batch) {
  const RankShapes& s = ctx.shapes;
  if (s.scheme.chunked) return fpdt_head_backward(ctx, micro_batch);
  GraphWriter& w = ctx.w;
  w.set_position({Phase::kBackward, -1, static_cast<int32_t>(micro_batch)});
  const auto it = ctx.saved.find({-1, micro_batch});
  TRAINSIM_WORKLOAD_CHECK(it != ctx.saved.end())
      << "head backward of mb " << micro_batch << " before its forward";
  const LayerState state = it->second;
  ctx.saved.erase(it);
  const OpId params = ctx.zero3 ? ctx.zero3->acquire(head_unit_elements(s), true) : kNoOp;
  const int64_t rows = s.batch * s.tokens;
  const double logits = static_cast<double>(rows) * s.vocab_local;
  const BufferId grad = w.alloc(OpLabel::kLogits, MemoryCategory::kBuffers, MemorySpace::kHbm,
                                s.act_bytes * logits, Stream::kCompute, {params})
                            .buffer;
  w.memory(OpLabel::kLoss, logits * (4.0 + s.act_bytes));
  w.release(state.stash, Stream::kCompute);
  w.gemm(OpLabel::kLmHead, GemmPass::kInputGrad, rows, s.hidden, s.vocab_local);
  const bool owns_matrix = !s.tied_embeddings || !s.head_beside_embedding();
  weight_grad_gemm(ctx, OpLabel::kLmHead, s.vocab_local, s.hidden, rows,
                   owns_matrix ? s.vocab_local * s.hidden : 0);
  release_after_weight_grads(ctx, grad);
  const CollectiveKind reduce = s.megatron_sp ? CollectiveKind::kReduceScatter : CollectiveKind::kAllReduce;
  const OpId r = w.collective(OpLabel::kTpComm, reduce, GroupKind::kTp, s.hidden_bytes(), Stream::kComm,
                              {w.last(Stream::kCompute)});
  const OpId done = w.memory(OpLabel::kFinalNorm, 3 * s.hidden_norm_bytes(), {r});
  gradients_done(ctx, done, norm_params(s));
  w.release(state.input, Stream::kCompute);
  if (ctx.zero3) ctx.zero3->release(done);
  return done;
}

}  // namespace trainsim::workload
