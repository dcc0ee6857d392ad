#include "sim/analytic/params.h"

namespace trainsim::analytic {

int64_t attention_matmul_params(const config::Model& m) {
  const int64_t h = m.hidden, d = m.head_dim, heads = m.heads;
  if (!m.mla.enabled()) return h * (heads + 2 * m.kv_heads) * d + heads * d * h;
  const config::Mla& a = m.mla;
  const int64_t qk = m.qk_head_dim(), v = m.value_head_dim();
  const int64_t queries = a.q_lora_rank > 0 ? h * a.q_lora_rank + a.q_lora_rank * heads * qk : h * heads * qk;
  const int64_t keys_values = h * (a.kv_lora_rank + a.rope_head_dim) + a.kv_lora_rank * heads * (d + v);
  return queries + keys_values + heads * v * h;
}

ParameterCount parameter_count(const config::Model& m) {
  const int64_t h = m.hidden, d = m.head_dim, f = m.ffn_hidden;
  const int64_t qkv = (m.heads + 2 * m.kv_heads) * d;
  const int64_t fc1 = f * (m.activation == config::Activation::kSwiglu ? 2 : 1);
  const int64_t norm = h * (m.norm == config::Norm::kLayerNorm ? 2 : 1);
  // MLA normalises its latents (RMSNorm, weights only); it has no biases (scenario rule).
  const int64_t latent_norms = m.mla.enabled() ? m.mla.q_lora_rank + m.mla.kv_lora_rank : 0;
  ParameterCount p;
  const int64_t attention =
      attention_matmul_params(m) + 2 * norm + latent_norms + (m.linear_bias ? qkv + h : 0);
  p.per_layer = attention + h * fc1 + f * h + (m.linear_bias ? fc1 + h : 0);
  p.embedding =
      m.vocab * h + (m.position_embedding == config::PositionEmbedding::kLearned ? m.seq_len * h : 0);
  p.final_norm = norm;
  p.lm_head = m.tied_embeddings ? 0 : m.vocab * h;
  const int64_t outside = p.embedding + p.final_norm + p.lm_head;
  p.total = m.layers * p.per_layer + outside;
  p.active = p.total;
  if (m.moe.enabled()) {
    const int64_t fe = m.moe.expert_ffn_hidden;
    const int64_t expert = h * fe * (m.activation == config::Activation::kSwiglu ? 2 : 1) + fe * h;
    const int64_t router = h * m.moe.experts;
    p.moe_layers = m.layers - m.moe.dense_layers;
    p.per_moe_layer = attention + router + (m.moe.experts + m.moe.shared_experts) * expert;
    const int64_t dense_layers = m.layers - p.moe_layers;
    p.total = dense_layers * p.per_layer + p.moe_layers * p.per_moe_layer + outside;
    p.active = dense_layers * p.per_layer +
               p.moe_layers * (attention + router + (m.moe.top_k + m.moe.shared_experts) * expert) + outside;
  }
  return p;
}

double narayanan_parameters(const config::Model& m) {
  const double l = static_cast<double>(m.layers), h = static_cast<double>(m.hidden);
  const double v = static_cast<double>(m.vocab), s = static_cast<double>(m.seq_len);
  return 12 * l * h * h * (1 + 13 / (12 * h) + (v + s) / (12 * l * h));
}

}  // namespace trainsim::analytic
