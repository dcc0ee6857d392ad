#include "sim/analytic/params.h"

namespace trainsim::analytic {

ParameterCount parameter_count(const config::Model& m) {
  const int64_t h = m.hidden, d = m.head_dim, f = m.ffn_hidden;
  const int64_t qkv = (m.heads + 2 * m.kv_heads) * d;
  const int64_t fc1 = f * (m.activation == config::Activation::kSwiglu ? 2 : 1);
  const int64_t norm = h * (m.norm == config::Norm::kLayerNorm ? 2 : 1);
  ParameterCount p;
  p.per_layer = h * qkv + m.heads * d * h + h * fc1 + f * h + 2 * norm;
  if (m.linear_bias) p.per_layer += qkv + h + fc1 + h;
  p.embedding =
      m.vocab * h + (m.position_embedding == config::PositionEmbedding::kLearned ? m.seq_len * h : 0);
  p.final_norm = norm;
  p.lm_head = m.tied_embeddings ? 0 : m.vocab * h;
  p.total = m.layers * p.per_layer + p.embedding + p.final_norm + p.lm_head;
  return p;
}

double narayanan_parameters(const config::Model& m) {
  const double l = static_cast<double>(m.layers), h = static_cast<double>(m.hidden);
  const double v = static_cast<double>(m.vocab), s = static_cast<double>(m.seq_len);
  return 12 * l * h * h * (1 + 13 / (12 * h) + (v + s) / (12 * l * h));
}

}  // namespace trainsim::analytic
