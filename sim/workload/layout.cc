#include "sim/workload/layout.h"

#include <algorithm>

#include "sim/workload/errors.h"

namespace trainsim::workload {

namespace {

void number_layers(StageLayout& layout) {
  layout.first_layer.resize(layout.layer_count.size());
  int64_t first = 0;
  for (size_t v = 0; v < layout.layer_count.size(); ++v) {
    layout.first_layer[v] = first;
    first += layout.layer_count[v];
  }
}

}  // namespace

StageLayout partition_layers(const RankShapes& shapes) {
  if (shapes.first_stage_layers > 0 || shapes.last_stage_layers > 0) {
    return partition_layers_with_ends(shapes.layers, shapes.pp, shapes.first_stage_layers,
                                      shapes.last_stage_layers);
  }
  return partition_layers(shapes.layers, shapes.pp, shapes.vpp, shapes.v_shape);
}

StageLayout partition_layers_with_ends(int64_t layers, int64_t pp, int64_t first_stage_layers,
                                       int64_t last_stage_layers) {
  StageLayout layout;
  layout.pp = pp;
  const int64_t middle_stages = pp - (first_stage_layers > 0 ? 1 : 0) - (last_stage_layers > 0 ? 1 : 0);
  const int64_t middle_layers = layers - first_stage_layers - last_stage_layers;
  TRAINSIM_WORKLOAD_CHECK(
      pp > 1 && (middle_stages == 0 ? middle_layers == 0
                                    : middle_layers >= middle_stages && middle_layers % middle_stages == 0))
      << layers << " layers, first stage " << first_stage_layers << ", last stage " << last_stage_layers
      << ", over " << pp << " stages";
  layout.layer_count.assign(pp, middle_stages > 0 ? middle_layers / middle_stages : 0);
  if (first_stage_layers > 0) layout.layer_count.front() = first_stage_layers;
  if (last_stage_layers > 0) layout.layer_count.back() = last_stage_layers;
  number_layers(layout);
  return layout;
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
  number_layers(layout);
  return layout;
}

LayerParams layer_params(const RankShapes& s, bool moe) {
  LayerParams p;
  const int64_t branches = s.swiglu ? 2 : 1;
  if (s.mla()) {
    p.qkv_weight = s.query_input() * s.q_width() + s.kv_lora_rank * s.kv_up_width();
    p.latent = s.hidden * (s.q_lora_rank + s.kv_latent());
  } else {
    p.qkv_weight = s.hidden * (s.q_width() + s.kv_width());
  }
  p.proj_weight = s.attn_out_width() * s.hidden;
  if (s.linear_bias) {
    p.qkv_bias = s.q_width() + s.kv_width();
    p.proj_bias = s.hidden;
  }
  if (moe) {
    p.router = s.hidden * s.experts;
    p.expert_fc1 = s.local_experts * s.hidden * s.expert_ffn_local * branches;
    p.expert_fc2 = s.local_experts * s.expert_ffn_local * s.hidden;
    p.shared_fc1 = s.hidden * s.shared_ffn_local * branches;
    p.shared_fc2 = s.shared_ffn_local * s.hidden;
  } else {
    p.fc1_weight = s.hidden * s.ffn_local * branches;
    p.fc2_weight = s.ffn_local * s.hidden;
    if (s.linear_bias) {
      p.fc1_bias = s.ffn_local * branches;
      p.fc2_bias = s.hidden;
    }
  }
  p.norms = 2 * norm_params(s) + s.q_lora_rank + s.kv_lora_rank;
  return p;
}

int64_t norm_params(const RankShapes& s) { return s.hidden * (s.norm_bias ? 2 : 1); }

std::vector<int64_t> layer_tensors(const RankShapes& s) {
  const LayerParams p = layer_params(s);
  const int64_t first_norm = p.norms / 2;
  std::vector<int64_t> tensors = {first_norm,
                                  p.latent,
                                  p.qkv_weight + p.qkv_bias,
                                  p.proj_weight + p.proj_bias,
                                  p.norms - first_norm,
                                  p.fc1_weight + p.fc1_bias,
                                  p.fc2_weight + p.fc2_bias};
  std::erase(tensors, 0);
  return tensors;
}

int64_t zero3_persistent_params(const RankShapes& s, const StageLayout& layout, int64_t stage) {
  const auto persistent = [&](int64_t tensor) { return s.zero3_persistent(tensor) ? tensor : 0; };
  int64_t per_layer = 0;
  for (const int64_t tensor : layer_tensors(s)) per_layer += persistent(tensor);
  const int64_t final_norm = norm_params(s);
  int64_t total = 0;
  for (int64_t chunk = 0; chunk < layout.vpp; ++chunk) {
    const int64_t v = layout.virtual_stage(stage, chunk);
    total += layout.layer_count[v] * per_layer;
    if (layout.has_embedding(v)) total += persistent(embedding_params(s));
    if (layout.has_head(v)) total += persistent(final_norm) + persistent(head_params(s) - final_norm);
  }
  return total;
}

int64_t moe_layer_count(const RankShapes& s, const StageLayout& layout, int64_t v) {
  if (s.experts == 0) return 0;
  const int64_t first = std::max(layout.first_layer[v], s.dense_layers);
  return std::max<int64_t>(0, layout.first_layer[v] + layout.layer_count[v] - first);
}

int64_t embedding_params(const RankShapes& s) {
  return s.vocab_local * s.hidden + (s.learned_positions ? s.seq * s.hidden : 0);
}

int64_t head_params(const RankShapes& s) {
  const int64_t final_norm = norm_params(s);
  const bool owns_matrix = !s.tied_embeddings || !s.head_beside_embedding();
  return final_norm + (owns_matrix ? s.vocab_local * s.hidden : 0);
}

int64_t stage_layer_sum(const RankShapes& s, const StageLayout& layout, int64_t stage,
                        int64_t (LayerParams::*quantity)() const) {
  const int64_t dense = (layer_params(s).*quantity)();
  const int64_t moe = (layer_params(s, true).*quantity)();
  int64_t total = 0;
  for (int64_t chunk = 0; chunk < layout.vpp; ++chunk) {
    const int64_t v = layout.virtual_stage(stage, chunk);
    const int64_t moe_layers = moe_layer_count(s, layout, v);
    total += (layout.layer_count[v] - moe_layers) * dense + moe_layers * moe;
  }
  return total;
}

int64_t stage_params(const RankShapes& s, const StageLayout& layout, int64_t stage) {
  int64_t total = stage_layer_sum(s, layout, stage, &LayerParams::total);
  for (int64_t chunk = 0; chunk < layout.vpp; ++chunk) {
    const int64_t v = layout.virtual_stage(stage, chunk);
    if (layout.has_embedding(v)) total += embedding_params(s);
    if (layout.has_head(v)) total += head_params(s);
  }
  return total;
}

int64_t stage_expert_params(const RankShapes& s, const StageLayout& layout, int64_t stage) {
  return stage_layer_sum(s, layout, stage, &LayerParams::experts);
}

int64_t model_params(const RankShapes& s, const StageLayout& layout) {
  // Every TP shard once (and every expert-parallel shard of the experts), replicated tensors once.
  const auto whole = [&s](const LayerParams& p) {
    return (p.total() - p.replicated() - p.experts()) * s.tp + p.experts() * s.etp * s.ep + p.replicated();
  };
  int64_t layers = 0;
  int64_t moe_layers = 0;
  for (int64_t v = 0; v < layout.virtual_stages(); ++v) {
    layers += layout.layer_count[v];
    moe_layers += moe_layer_count(s, layout, v);
  }
  const int64_t word = s.vocab_local * s.tp * s.hidden;
  return (layers - moe_layers) * whole(layer_params(s)) + moe_layers * whole(layer_params(s, true)) + word +
         (s.learned_positions ? s.seq * s.hidden : 0) + norm_params(s) + (s.tied_embeddings ? 0 : word);
}

}  // namespace trainsim::workload
