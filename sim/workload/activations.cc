#include "sim/workload/activations.h"

#include <algorithm>

namespace trainsim::workload {
namespace {

double branches(const RankShapes& s) { return s.swiglu ? 2 : 1; }

// Bytes per element of a linear layer's input kept for its weight gradient: FP8 training keeps the
// input as the FP8 GEMM read it (Transformer Engine's Linear, LayerNormLinear, LayerNormMLP and
// GroupedLinear save the quantized input, or its transpose, for the wgrad GEMM), else the activation
// dtype.
double gemm_input_bytes(const RankShapes& s) { return s.fp8 ? 1.0 : s.act_bytes; }

// A dense MLP's kept tensors: the FC1 output and the activation output (FC2 input).
double mlp_kept(const RankShapes& s, int64_t ffn_local, double fc1_width) {
  const double rows = static_cast<double>(s.batch * s.tokens);
  return rows * (s.act_bytes * fc1_width + gemm_input_bytes(s) * static_cast<double>(ffn_local));
}

double experts_kept(const RankShapes& s) {
  const double e = s.act_bytes;
  const double g = gemm_input_bytes(s);
  const double h = static_cast<double>(s.hidden);
  const double rows = static_cast<double>(s.local_experts * s.expert_rows);
  const double ffn = static_cast<double>(s.expert_ffn_local);
  const int64_t shared_ffn = s.shared_ffn_local;
  return 4.0 * static_cast<double>(s.batch * s.tokens_norm * s.experts)  // router probabilities
         + rows * (g * h + e * ffn * branches(s) + g * ffn)              // expert input, FC1, activation
         + s.dispatch_bytes()                                            // expert outputs
         + (shared_ffn > 0 ? mlp_kept(s, shared_ffn, static_cast<double>(shared_ffn) * branches(s)) : 0.0);
}

}  // namespace

LayerActivationBytes layer_activation_bytes(const RankShapes& s, bool moe) {
  const double e = s.act_bytes;
  const double b = static_cast<double>(s.batch);
  const double t = static_cast<double>(s.tokens);
  const double tn = static_cast<double>(s.tokens_norm);
  const double h = static_cast<double>(s.hidden);
  const auto q_width = static_cast<double>(s.q_width());
  const auto kv_width = static_cast<double>(s.kv_width());
  const auto out_width = static_cast<double>(s.attn_out_width());
  // MLA's latents, sequence-sharded under SP: the down projections' outputs (the norms' inputs) and
  // the normalised latents (the up projections' inputs).
  const double latents =
      s.mla() ? static_cast<double>(2 * (s.q_lora_rank + s.kv_lora_rank) + s.rope_head_dim) : 0.0;
  const double fc1_width = static_cast<double>(s.ffn_local) * (s.swiglu ? 2 : 1);
  const double mask = s.dropout ? 1.0 : 0.0;
  // Attention-kernel extent: Ulysses/FPDT see the whole sequence with a slice of the heads.
  const double attn_q = s.scheme.heads_over_sp ? static_cast<double>(s.seq) : t;
  const double attn_heads = static_cast<double>(s.attn_heads);

  LayerActivationBytes a;
  a.input = e * b * tn * h;
  const double scores = b * attn_heads * attn_q * attn_q;  // elements of one score matrix
  double core = 0;
  double lse = 0;
  if (s.fused_attention) {
    lse = 4.0 * b * attn_heads * attn_q;
  } else {
    core = scores * (e + mask * (1.0 + e));  // softmax output (+ dropout mask and output)
  }
  const double g = gemm_input_bytes(s);
  const double kept = g * b * tn * h                      // LN1 output (QKV input)
                      + e * b * tn * latents              // MLA latents
                      + e * b * t * (q_width + kv_width)  // Q, K, V
                      + lse                               // fused kernel's log-sum-exp
                      + g * b * t * out_width             // attention output (projection input)
                      +
                      (s.scheme.heads_over_sp ? e * b * t * out_width : 0.0)  // head-sharded attention output
                      + mask * b * tn * h                                     // attention dropout mask
                      + (e + g) * b * tn * h                                  // LN2 input and output
                      + (moe ? experts_kept(s) : mlp_kept(s, s.ffn_local, fc1_width)) +
                      mask * b * tn * h;  // MLP dropout mask
  a.core = core;
  a.full_stash = kept + core;
  switch (s.recompute) {
    case config::Recompute::kNone:
      a.stash = a.full_stash;
      break;
    case config::Recompute::kSelective:
      a.stash = kept;
      break;
    case config::Recompute::kFull:
      a.stash = 0;
      break;
  }
  double largest = e * b * t * std::max({h, q_width + kv_width, fc1_width});
  double gathered = s.megatron_sp ? e * b * t * h : 0.0;
  if (moe) {
    // The permuted tokens and the all-to-all's output beside the gathered expert input.
    const double rows = static_cast<double>(s.local_experts * s.expert_rows);
    largest =
        std::max(largest, e * rows * std::max(h, static_cast<double>(s.expert_ffn_local) * branches(s)));
    gathered += 2 * s.dispatch_bytes();
  }
  const double score_bytes = s.fused_attention ? 0.0 : e * scores;
  a.workspace_forward = largest + gathered + score_bytes;
  a.workspace_backward = 2 * largest + gathered + 2 * score_bytes;
  return a;
}

}  // namespace trainsim::workload
