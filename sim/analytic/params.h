// Closed-form parameter counts.
#ifndef TRAINSIM_SIM_ANALYTIC_PARAMS_H_
#define TRAINSIM_SIM_ANALYTIC_PARAMS_H_

#include <cstdint>

#include "sim/config/scenario.h"

namespace trainsim::analytic {

// Exact parameter count of the model (not of a rank). Per layer: QKV h(H + 2H_kv)d, projection Hdh,
// FC1 h*f (2x for SwiGLU), FC2 f*h, biases of those four when the model has them, two norms of h
// (2h for LayerNorm). Plus the word embedding V*h, learned positions s*h, the final norm and an
// untied LM head V*h. An MoE layer (config::Moe) has instead of FC1 and FC2 a router h*E and
// E + shared experts of h*f_e (2x for SwiGLU) + f_e*h; only top_k + shared of them are active per
// token. With multi-head latent attention (config::Mla) the QKV GEMM becomes the down projections
// h*(q_lora + kv_lora + r) (h*H*(d + r) for queries without a latent), the up projections
// q_lora*H*(d + r) + kv_lora*H*(d + d_v) and the latents' norms; the projection is H*d_v*h.
struct ParameterCount {
  int64_t per_layer = 0;      // a dense layer
  int64_t per_moe_layer = 0;  // an MoE layer (0 for a dense model)
  int64_t moe_layers = 0;
  int64_t active = 0;     // what one token passes through: total with top_k + shared experts per MoE layer
  int64_t embedding = 0;  // word + position embeddings
  int64_t final_norm = 0;
  int64_t lm_head = 0;  // 0 when tied to the embedding
  int64_t total = 0;
};
ParameterCount parameter_count(const config::Model& model);

// Weights of one layer's attention GEMMs (QKV or MLA's down and up projections, and the output
// projection): the matmul parameters each token multiplies by, twice per FLOP.
int64_t attention_matmul_params(const config::Model& model);

// Narayanan et al. 2021 (ground-truth.md A.7): P = 12*l*h^2*(1 + 13/(12h) + (V + s)/(12*l*h)), for
// GPT-style models (MHA, 4h GeLU MLP, biases, LayerNorm, learned positions, tied embeddings). It
// leaves out the final LayerNorm (2h), so it is parameter_count(...).total - 2h for those models.
double narayanan_parameters(const config::Model& model);

}  // namespace trainsim::analytic

#endif  // TRAINSIM_SIM_ANALYTIC_PARAMS_H_
