// The Megatron-LM transformer layer with tensor parallelism (Shoeybi et al. 2019) and, optionally,
// Megatron sequence parallelism (Korthikanti et al. 2022), with the attention core supplied by the
// scheme (local, Ulysses or ring). Also the dispatch of layer_forward / layer_backward.
//
// Forward: norm, [SP: all-gather], QKV GEMM, [QKV bias add], [RoPE], attention core, projection GEMM,
// all-reduce (TP) or reduce-scatter (TP+SP), bias-dropout-add; then the same around FC1, activation,
// FC2.
// That is 2 all-reduces per layer forward (A.7: 4 per layer per micro-batch with the backward), or
// 2 all-gathers + 2 reduce-scatters under SP.
// Backward (Megatron-LM tensor_parallel/layers.py LinearWithGradAccumulationAndAsyncCommunication):
// the gradient entering each row-parallel GEMM is all-gathered under SP (the backward of the
// reduce-scatter); each column-parallel GEMM computes its input gradient, then all-reduces (TP) or
// reduce-scatters (SP) it asynchronously while the weight gradient runs (or, without Megatron's
// async_tensor_model_parallel_allreduce, after it: reduce_input_grad); under SP the saved
// sequence-sharded input is all-gathered again for the weight gradient. So SP's backward issues 4
// all-gathers + 2 reduce-scatters per layer where plain TP issues 2 all-reduces.
// Recompute: full replays the whole forward (its collectives included) before the backward;
// selective replays only the unfused attention core (softmax, dropout) right before its backward.
// With tp_comm_overlap (Transformer Engine's userbuffers, as NeMo's performance recipes configure
// them: nemo/collections/llm/recipes/tp_overlap_configs/userbuffers.py) the all-gather feeding a
// column-parallel GEMM and the reduce-scatter of a row-parallel GEMM's output run together with the
// GEMM (ring exchange of the chunks it consumes or produces), forward and in the backward's
// gradient all-gathers; what follows waits for both, and the GEMM runs slowed while they overlap.
#include "sim/workload/context.h"
#include "sim/workload/errors.h"

namespace trainsim::workload {

OpId tp_reduce(BuildContext& ctx, OpId after, double bytes) {
  const CollectiveKind kind =
      ctx.shapes.megatron_sp ? CollectiveKind::kReduceScatter : CollectiveKind::kAllReduce;
  return ctx.w.collective(OpLabel::kTpComm, kind, GroupKind::kTp, bytes, Stream::kComm, {after});
}

OpId tp_gather(BuildContext& ctx, OpId after, double bytes) {
  if (!ctx.shapes.megatron_sp) return kNoOp;
  return ctx.w.collective(OpLabel::kTpComm, CollectiveKind::kAllGather, GroupKind::kTp, bytes, Stream::kComm,
                          {after});
}

OpId reduce_input_grad(BuildContext& ctx, double bytes, const std::function<void()>& weight_grad) {
  if (!ctx.shapes.async_tp_reduce) weight_grad();
  const OpId reduced = tp_reduce(ctx, ctx.w.last(Stream::kCompute), bytes);
  if (ctx.shapes.async_tp_reduce) weight_grad();
  return reduced;
}

namespace {

// What a GEMM that consumes the all-gather `gathered` waits for before it starts: the gather, or
// nothing when the gather overlaps it (join_gather then makes what follows wait for it).
OpId gemm_input(const BuildContext& ctx, OpId gathered) {
  return ctx.shapes.tp_comm_overlap ? kNoOp : gathered;
}

void join_gather(BuildContext& ctx, OpId gathered) {
  if (ctx.shapes.tp_comm_overlap && gathered != kNoOp) ctx.w.wait(Stream::kCompute, {gathered});
}

// The reduce-scatter (or all-reduce) of the output of the row-parallel GEMM just issued after
// `before`: it starts after the GEMM, or with it when it overlaps the GEMM.
OpId reduce_output(BuildContext& ctx, OpId before) {
  return tp_reduce(ctx, ctx.shapes.tp_comm_overlap ? before : ctx.w.last(Stream::kCompute));
}

}  // namespace

OpId mlp_forward(BuildContext& ctx, int64_t ffn_local) {
  GraphWriter& w = ctx.w;
  const RankShapes& s = ctx.shapes;
  const int64_t rows = s.batch * s.tokens;
  const int64_t fc1_width = ffn_local * (s.swiglu ? 2 : 1);
  const OpId x = tp_gather(ctx, w.last(Stream::kCompute));
  w.gemm(OpLabel::kFc1, GemmPass::kForward, rows, fc1_width, s.hidden, {gemm_input(ctx, x)});
  join_gather(ctx, x);
  const OpId activation = w.memory(OpLabel::kActivation, s.act_bytes * static_cast<double>(rows) *
                                                             static_cast<double>(fc1_width + ffn_local));
  w.gemm(OpLabel::kFc2, GemmPass::kForward, rows, s.hidden, ffn_local);
  return reduce_output(ctx, activation);
}

OpId mlp_backward(BuildContext& ctx, OpId grad_ready, OpId params, const MlpGradients& mlp) {
  GraphWriter& w = ctx.w;
  const RankShapes& s = ctx.shapes;
  const int64_t rows = s.batch * s.tokens;
  const int64_t fc1_width = mlp.ffn_local * (s.swiglu ? 2 : 1);
  const OpId g = tp_gather(ctx, grad_ready);
  w.gemm(OpLabel::kFc2, GemmPass::kInputGrad, rows, mlp.ffn_local, s.hidden,
         {grad_ready, gemm_input(ctx, g), params});
  join_gather(ctx, g);
  weight_grad_gemm(ctx, OpLabel::kFc2, mlp.ffn_local, s.hidden, rows, mlp.fc2_elements);
  w.memory(OpLabel::kActivation,
           s.act_bytes * static_cast<double>(rows) *
               static_cast<double>(mlp.ffn_local + (mlp.bias_passes ? 3 : 2) * fc1_width));
  const OpId x = tp_gather(ctx, w.last(Stream::kCompute));
  w.gemm(OpLabel::kFc1, GemmPass::kInputGrad, rows, s.hidden, fc1_width);
  return reduce_input_grad(
      ctx, [&] { weight_grad_gemm(ctx, OpLabel::kFc1, fc1_width, s.hidden, rows, mlp.fc1_elements, x); });
}

namespace {

struct ForwardResult {
  BufferId output = -1;  // -1 in recompute
  BufferId stash = -1;   // what this pass allocated for the backward (-1 if nothing)
};

// The attention core of the layer's scheme: heads over the sp group between all-to-alls (Ulysses), K/V
// exchanged between the sequence shards (ring or all-gather), or this rank's tokens alone.
OpId attention_core_forward(BuildContext& ctx, int64_t layer, int64_t micro_batch) {
  const RankShapes& s = ctx.shapes;
  if (s.scheme.heads_over_sp) {
    ulysses_attention_forward(ctx);
    return ctx.w.last(Stream::kComm);  // the projection waits for the output all-to-all
  }
  if (s.scheme.exchanges_kv && s.cp_all_gather) {
    all_gather_attention_forward(ctx);
  } else if (s.scheme.exchanges_kv) {
    ring_attention_forward(ctx, layer, micro_batch);
  } else {
    local_attention_forward(ctx);
  }
  return kNoOp;
}

OpId attention_core_backward(BuildContext& ctx, int64_t layer, int64_t micro_batch) {
  const RankShapes& s = ctx.shapes;
  if (s.scheme.heads_over_sp) {
    ulysses_attention_backward(ctx);
    return ctx.w.last(Stream::kComm);
  }
  if (s.scheme.exchanges_kv && s.cp_all_gather) {
    all_gather_attention_backward(ctx);
  } else if (s.scheme.exchanges_kv) {
    ring_attention_backward(ctx, layer, micro_batch);
  } else {
    local_attention_backward(ctx);
  }
  return kNoOp;
}

// The forward pass of one layer, in the writer's current phase (forward, or recompute inside the
// backward). `params_ready` is the ZeRO-3 all-gather to wait for (kNoOp otherwise).
ForwardResult dense_forward(BuildContext& ctx, int64_t layer, int64_t micro_batch, OpId input_ready,
                            OpId params_ready) {
  GraphWriter& w = ctx.w;
  const RankShapes& s = ctx.shapes;
  const bool recompute = w.position().phase == Phase::kRecompute;
  const double e = s.act_bytes;
  const int64_t rows = s.batch * s.tokens;
  const double hn = s.hidden_norm_bytes();
  const double mask = s.dropout ? static_cast<double>(s.batch) * s.tokens_norm * s.hidden : 0.0;
  const int64_t qkv_width = s.q_width() + s.kv_width();

  const LayerActivationBytes& act = ctx.act_of(layer);
  ForwardResult result;
  const double stash_bytes = recompute ? act.full_stash : act.stash;
  if (stash_bytes > 0) {
    result.stash = w.alloc(OpLabel::kActivationStash, MemoryCategory::kActivations, MemorySpace::kHbm,
                           stash_bytes, Stream::kCompute)
                       .buffer;
  }
  const BufferId workspace = w.alloc(OpLabel::kWorkspace, MemoryCategory::kBuffers, MemorySpace::kHbm,
                                     act.workspace_forward, Stream::kCompute)
                                 .buffer;
  // Attention block.
  w.memory(OpLabel::kNorm, 2 * hn, {input_ready, params_ready});
  if (s.mla()) {
    mla_forward(ctx);
  } else {
    const OpId x = tp_gather(ctx, w.last(Stream::kCompute));
    w.gemm(OpLabel::kQkv, GemmPass::kForward, rows, qkv_width, s.hidden, {gemm_input(ctx, x)});
    join_gather(ctx, x);
    if (s.bias_passes) w.memory(OpLabel::kQkv, 2 * e * rows * qkv_width);  // + bias, in place
    if (s.rope) w.memory(OpLabel::kRope, 2 * e * rows * (s.qkv_heads + s.qkv_kv_heads) * s.head_dim);
  }
  const OpId core = attention_core_forward(ctx, layer, micro_batch);
  const OpId before_projection =
      s.tp_comm_overlap && core != kNoOp ? w.wait(Stream::kCompute, {core}) : w.last(Stream::kCompute);
  w.gemm(OpLabel::kProjection, GemmPass::kForward, rows, s.hidden, s.attn_out_width(), {core});
  const OpId r1 = reduce_output(ctx, before_projection);
  w.memory(OpLabel::kResidual, 3 * hn + mask, {r1});
  // MLP block.
  w.memory(OpLabel::kNorm, 2 * hn);
  const OpId r2 = s.moe_layer(layer) ? moe_forward(ctx) : mlp_forward(ctx, s.ffn_local);
  if (!recompute) {
    result.output =
        w.alloc(OpLabel::kLayerInput, MemoryCategory::kActivations, MemorySpace::kHbm, hn, Stream::kCompute)
            .buffer;
  }
  w.memory(OpLabel::kResidual, 3 * hn + mask, {r2});
  w.release(workspace, Stream::kCompute);
  return result;
}

BufferId dense_layer_forward(BuildContext& ctx, int64_t layer, int64_t micro_batch, BufferId input,
                             OpId input_ready) {
  const auto [params, state] =
      open_layer_forward(ctx, layer, micro_batch, input, input_ready, ctx.params_of(layer).total(),
                         ctx.shapes.hidden_norm_bytes());
  const ForwardResult r = dense_forward(ctx, layer, micro_batch, input_ready, params);
  state.stash = r.stash;
  close_layer_forward(ctx, state);
  return r.output;
}

OpId dense_layer_backward(BuildContext& ctx, int64_t layer, int64_t micro_batch, OpId grad_ready) {
  GraphWriter& w = ctx.w;
  const RankShapes& s = ctx.shapes;
  const LayerParams& p = ctx.params_of(layer);
  const LayerActivationBytes& act = ctx.act_of(layer);
  auto [state, params] = open_layer_backward(ctx, layer, micro_batch, p.total());
  const int32_t l32 = static_cast<int32_t>(layer), mb32 = static_cast<int32_t>(micro_batch);
  const double hn = s.hidden_norm_bytes();
  const double e = s.act_bytes;
  const int64_t rows = s.batch * s.tokens;
  const int64_t out_width = s.attn_out_width();
  const int64_t qkv_width = s.q_width() + s.kv_width();
  const int64_t fc1_width = s.ffn_local * (s.swiglu ? 2 : 1);
  // With separate bias passes, each bias gradient re-reads the gradient it sums over the tokens:
  // the bias-dropout-add backward's (residual ops), the bias-GeLU backward's, and the QKV output's.
  const double bias_hn = s.bias_passes ? hn : 0.0;

  BufferId rematerialised = -1;
  if (s.recompute == config::Recompute::kFull) {
    fetch_checkpointed_input(ctx, state, hn);
    w.set_position({Phase::kRecompute, l32, mb32});
    rematerialised = dense_forward(ctx, layer, micro_batch, grad_ready, params).stash;
    w.set_position({Phase::kBackward, l32, mb32});
  }
  const BufferId workspace = w.alloc(OpLabel::kWorkspace, MemoryCategory::kBuffers, MemorySpace::kHbm,
                                     act.workspace_backward, Stream::kCompute)
                                 .buffer;
  // MLP block.
  const OpId r1 =
      s.moe_layer(layer)
          ? moe_backward(ctx, grad_ready)
          : mlp_backward(ctx, grad_ready, params,
                         {s.ffn_local, p.fc1_weight + p.fc1_bias, p.fc2_weight + p.fc2_bias, s.bias_passes});
  gradients_done(ctx, w.memory(OpLabel::kNorm, 3 * hn, {r1}), p.norms / 2);
  w.memory(OpLabel::kResidual, 3 * hn + bias_hn);
  // Attention block.
  const OpId g2 = tp_gather(ctx, w.last(Stream::kCompute));
  w.gemm(OpLabel::kProjection, GemmPass::kInputGrad, rows, out_width, s.hidden, {gemm_input(ctx, g2)});
  join_gather(ctx, g2);
  weight_grad_gemm(ctx, OpLabel::kProjection, out_width, s.hidden, rows, p.proj_weight + p.proj_bias);
  BufferId core = -1;
  if (s.recompute == config::Recompute::kSelective && act.core > 0) {
    core = w.alloc(OpLabel::kActivationStash, MemoryCategory::kActivations, MemorySpace::kHbm, act.core,
                   Stream::kCompute)
               .buffer;
    w.set_position({Phase::kRecompute, l32, mb32});
    local_attention_forward(ctx);
    w.set_position({Phase::kBackward, l32, mb32});
  }
  const OpId core_done = attention_core_backward(ctx, layer, micro_batch);
  if (core >= 0) w.release(core, Stream::kCompute);
  OpId r2 = kNoOp;
  if (s.mla()) {
    r2 = mla_backward(ctx, core_done, p);
  } else {
    if (s.rope)
      w.memory(OpLabel::kRope, 2 * e * rows * (s.qkv_heads + s.qkv_kv_heads) * s.head_dim, {core_done});
    if (s.bias_passes) w.memory(OpLabel::kQkv, e * rows * qkv_width, {core_done});
    const OpId x2 = tp_gather(ctx, w.last(Stream::kCompute));
    w.gemm(OpLabel::kQkv, GemmPass::kInputGrad, rows, s.hidden, qkv_width, {core_done});
    r2 = reduce_input_grad(ctx, [&] {
      weight_grad_gemm(ctx, OpLabel::kQkv, qkv_width, s.hidden, rows, p.qkv_weight + p.qkv_bias, x2);
    });
  }
  gradients_done(ctx, w.memory(OpLabel::kNorm, 3 * hn, {r2}), p.norms / 2);
  const OpId dx = w.memory(OpLabel::kResidual, 3 * hn + bias_hn);
  w.release(workspace, Stream::kCompute);
  if (ctx.holding != nullptr) {
    // What the weight-gradient pass reads: the inputs and output gradients of the four GEMMs, kept
    // sequence-sharded under SP where Megatron keeps them so (QKV and FC1 inputs; projection and FC2
    // output gradients). The rest of the stash goes now.
    const double mlp_operands =
        s.moe_layer(layer)
            ? moe_weight_grad_operands(s)
            : 2 * hn + e * static_cast<double>(rows) * static_cast<double>(s.ffn_local + fc1_width);
    const double qkv_operands = s.mla() ? mla_weight_grad_operands(s)
                                        : hn + e * static_cast<double>(rows) * static_cast<double>(qkv_width);
    const double operands =
        hn + e * static_cast<double>(rows) * static_cast<double>(out_width) + qkv_operands + mlp_operands;
    release_after_weight_grads(ctx, w.alloc(OpLabel::kWeightGradOperands, MemoryCategory::kActivations,
                                            MemorySpace::kHbm, operands, Stream::kCompute)
                                        .buffer);
  }
  if (rematerialised >= 0) w.release(rematerialised, Stream::kCompute);
  if (state.stash >= 0) w.release(state.stash, Stream::kCompute);
  w.release(state.input, Stream::kCompute);
  if (state.host_input >= 0) w.release(state.host_input, Stream::kCompute);
  if (ctx.zero3) ctx.zero3->release(dx);
  return dx;
}

AttentionShape local_shape(const RankShapes& s) {
  return {static_cast<int32_t>(s.batch),
          static_cast<int32_t>(s.attn_heads),
          static_cast<int32_t>(s.attn_kv_heads),
          static_cast<int32_t>(s.tokens),
          static_cast<int32_t>(s.tokens),
          static_cast<int32_t>(s.qk_head_dim()),
          static_cast<int32_t>(s.v_head_dim),
          true,
          s.fused_attention,
          s.dropout && !s.fused_attention};
}

}  // namespace

void local_attention_forward(BuildContext& ctx) {
  ctx.w.attention(false, local_shape(ctx.shapes), ctx.attention_model_flops);
}

void local_attention_backward(BuildContext& ctx) {
  ctx.w.attention(true, local_shape(ctx.shapes), 2 * ctx.attention_model_flops);
}

BufferId layer_forward(BuildContext& ctx, int64_t layer, int64_t micro_batch, BufferId input,
                       OpId input_ready) {
  if (ctx.shapes.scheme.chunked) {
    return fpdt_layer_forward(ctx, layer, micro_batch, input, input_ready);
  }
  return dense_layer_forward(ctx, layer, micro_batch, input, input_ready);
}

OpId layer_backward(BuildContext& ctx, int64_t layer, int64_t micro_batch, OpId grad_ready) {
  if (ctx.shapes.scheme.chunked) {
    return fpdt_layer_backward(ctx, layer, micro_batch, grad_ready);
  }
  return dense_layer_backward(ctx, layer, micro_batch, grad_ready);
}

}  // namespace trainsim::workload
