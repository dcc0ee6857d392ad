#include "sim/workload/layout.h"

#include "sim/workload/errors.h"

namespace trainsim::workload {

StageLayout partition_layers(const RankShapes& shapes) {
  return partition_layers(shapes.layers, shapes.pp, shapes.vpp, shapes.v_shape);
}

StageLayout partition_layers(int64_t layers, int64_t pp, int64_t vpp, bool v_shape) {
  StageLayout layout;
  layout.pp = pp;
  layout.vpp = vpp;
  layout.v_shape = v_shape;
  const int64_t stages = pp * vpp;
  TRAINSIM_WORKLOAD_CHECK(stages > 0 && layers >= stages) << layers << " layers over " << stages << " stages";
  const int64_t base = (layers + stages - 1) / stages;
  layout.layer_count.assign(stages, base);
  int64_t surplus = base * stages - layers;
  for (int64_t k = 0; surplus > 0; ++k, --surplus) {
    // last, first, second-to-last, second, ...
    const int64_t stage = k % 2 == 0 ? stages - 1 - k / 2 : k / 2;
    --layout.layer_count[stage];
  }
  layout.first_layer.resize(stages);
  int64_t first = 0;
  for (int64_t v = 0; v < stages; ++v) {
    layout.first_layer[v] = first;
    first += layout.layer_count[v];
  }
  return layout;
}

LayerParams layer_params(const RankShapes& s) {
  LayerParams p;
  const int64_t qkv_out = (s.qkv_heads + 2 * s.qkv_kv_heads) * s.head_dim;
  const int64_t fc1_out = s.ffn_local * (s.swiglu ? 2 : 1);
  p.qkv_weight = s.hidden * qkv_out;
  p.proj_weight = s.qkv_heads * s.head_dim * s.hidden;
  p.fc1_weight = s.hidden * fc1_out;
  p.fc2_weight = s.ffn_local * s.hidden;
  if (s.linear_bias) {
    p.qkv_bias = qkv_out;
    p.proj_bias = s.hidden;
    p.fc1_bias = fc1_out;
    p.fc2_bias = s.hidden;
  }
  p.norms = 2 * s.hidden * (s.norm_bias ? 2 : 1);
  return p;
}

int64_t embedding_params(const RankShapes& s) {
  return s.vocab_local * s.hidden + (s.learned_positions ? s.seq * s.hidden : 0);
}

int64_t head_params(const RankShapes& s) {
  const int64_t final_norm = s.hidden * (s.norm_bias ? 2 : 1);
  const bool owns_matrix = !s.tied_embeddings || !s.head_beside_embedding();
  return final_norm + (owns_matrix ? s.vocab_local * s.hidden : 0);
}

int64_t stage_params(const RankShapes& s, const StageLayout& layout, int64_t stage) {
  int64_t total = 0;
  const int64_t per_layer = layer_params(s).total();
  for (int64_t chunk = 0; chunk < layout.vpp; ++chunk) {
    const int64_t v = layout.virtual_stage(stage, chunk);
    total += layout.layer_count[v] * per_layer;
    if (layout.has_embedding(v)) total += embedding_params(s);
    if (layout.has_head(v)) total += head_params(s);
  }
  return total;
}

int64_t model_params(const RankShapes& s, const StageLayout& layout) {
  const LayerParams p = layer_params(s);
  const int64_t replicated = p.proj_bias + p.fc2_bias + p.norms;
  const int64_t per_layer = (p.total() - replicated) * s.tp + replicated;
  int64_t layers = 0;
  for (int64_t count : layout.layer_count) layers += count;
  const int64_t word = s.vocab_local * s.tp * s.hidden;
  return layers * per_layer + word + (s.learned_positions ? s.seq * s.hidden : 0) +
         s.hidden * (s.norm_bias ? 2 : 1) + (s.tied_embeddings ? 0 : word);
}

}  // namespace trainsim::workload
