// Where the model lives: which layers each (virtual) pipeline stage runs, and how many parameters
// one rank of a stage holds.
//
// Layer split: with V = pp * vpp virtual stages, every virtual stage gets ceil(L / V) layers and the
// surplus is taken one layer at a time from the last, first, second-to-last, second, ... virtual
// stage, so the stages that also run the LM head or the embedding get fewer layers. For Llama 3
// 405B (126 layers, pp 16) this gives 7 layers on the first and last stage and 8 elsewhere, the split
// the Llama 3 paper describes (Sec. 3.3.2). Virtual stage v = chunk * pp + stage (Megatron's
// interleaved assignment), or in a V (ZB-V, Qi et al. 2024 Sec. 6; DeepSeek's DualPipeV): stage s
// runs virtual stages s and 2pp - 1 - s, so activations go down the stages and back up, and the
// first stage holds both ends. The embedding runs on virtual stage 0, the final norm, LM head and
// loss on the last one. A plan that names the first or the last stage's layer count (vpp 1) gives the
// other stages an equal share of the rest.
#ifndef TRAINSIM_SIM_WORKLOAD_LAYOUT_H_
#define TRAINSIM_SIM_WORKLOAD_LAYOUT_H_

#include <cstdint>
#include <vector>

#include "sim/workload/shapes.h"

namespace trainsim::workload {

struct StageLayout {
  int64_t pp = 1;
  int64_t vpp = 1;
  bool v_shape = false;              // vpp == 2 in a V
  std::vector<int64_t> first_layer;  // per virtual stage
  std::vector<int64_t> layer_count;  // per virtual stage

  int64_t virtual_stages() const { return pp * vpp; }
  int64_t virtual_stage(int64_t stage, int64_t chunk) const {
    return v_shape && chunk == 1 ? 2 * pp - 1 - stage : chunk * pp + stage;
  }
  // The pipeline stage that runs virtual stage `v`.
  int64_t stage_of(int64_t v) const { return v_shape && v >= pp ? 2 * pp - 1 - v : v % pp; }
  bool has_embedding(int64_t virtual_stage) const { return virtual_stage == 0; }
  bool has_head(int64_t virtual_stage) const { return virtual_stage == pp * vpp - 1; }
};

// Splits `layers` over pp * vpp virtual stages as described above. Aborts when layers < pp * vpp
// (derive_shapes rejects such plans first).
StageLayout partition_layers(int64_t layers, int64_t pp, int64_t vpp, bool v_shape = false);
// The same with the first and/or last stage's count given (0: not given; vpp 1), the other stages
// sharing the rest evenly. Aborts when they cannot (the scenario decoder rejects such plans first).
StageLayout partition_layers_with_ends(int64_t layers, int64_t pp, int64_t first_stage_layers,
                                       int64_t last_stage_layers);
// The layout of a plan's shapes.
StageLayout partition_layers(const RankShapes& shapes);

// Parameters (elements) of one transformer layer held by one tensor-parallel rank. Column-parallel
// weights and biases (QKV, FC1) and row-parallel weights (projection, FC2) are split over TP;
// row-parallel biases and norms are replicated (Megatron-LM tensor_parallel/layers.py). An MoE
// layer has no dense MLP (fc1/fc2 are 0) but a router (hidden x experts, replicated over TP), its
// local experts (each an MLP of expert_ffn_hidden, split over TP like the dense one; no biases)
// and its shared experts (one MLP of shared_experts x expert_ffn_hidden, split over TP). With
// multi-head latent attention, qkv_weight holds the up projections (and the query projection when
// queries have no latent), column-parallel; the down projections are replicated over TP
// (Megatron-Core's duplicated TELinear) and are `latent`; the latents' norms count with `norms`.
struct LayerParams {
  int64_t qkv_weight = 0, qkv_bias = 0, proj_weight = 0, proj_bias = 0;
  int64_t latent = 0;
  int64_t fc1_weight = 0, fc1_bias = 0, fc2_weight = 0, fc2_bias = 0;
  int64_t norms = 0;  // both norms, weight (and bias for LayerNorm), and MLA's latent norms
  int64_t router = 0;
  int64_t expert_fc1 = 0, expert_fc2 = 0;  // every local expert together
  int64_t shared_fc1 = 0, shared_fc2 = 0;
  // What the expert-data-parallel group reduces and shards (the rest: the data-parallel group).
  int64_t experts() const { return expert_fc1 + expert_fc2; }
  // Held whole by every TP rank: under sequence parallelism their gradients are partial per rank and
  // all-reduced over TP (Megatron's _allreduce_layernorm_grads takes every parameter marked
  // sequence_parallel).
  int64_t replicated() const { return norms + proj_bias + fc2_bias + router + latent; }
  // The linear layers' weights (workload::linear_layer GEMMs), which fp8 training keeps fp8 copies of.
  int64_t linear_weights() const {
    return qkv_weight + proj_weight + latent + fc1_weight + fc2_weight + experts() + shared_fc1 + shared_fc2;
  }
  int64_t total() const {
    return qkv_weight + qkv_bias + proj_weight + proj_bias + latent + fc1_weight + fc1_bias + fc2_weight +
           fc2_bias + norms + router + experts() + shared_fc1 + shared_fc2;
  }
};
// The parameters of a dense layer, or of an MoE layer when `moe`.
LayerParams layer_params(const RankShapes& shapes, bool moe = false);
// One norm's parameters: its weight, and its bias for LayerNorm.
int64_t norm_params(const RankShapes& shapes);
// A dense layer's parameter tensors in forward order, each linear layer's weight with its bias: what
// ZeRO-3 gathers one by one (workload/zero3.h).
std::vector<int64_t> layer_tensors(const RankShapes& shapes);
// Parameters of the stage's ZeRO-3 units kept whole on every rank, never gathered: the tensors under
// RankShapes::zero3_persistent.
int64_t zero3_persistent_params(const RankShapes& shapes, const StageLayout& layout, int64_t stage);

// Word embedding shard (vocab/tp x hidden) plus learned positions (seq x hidden, replicated).
int64_t embedding_params(const RankShapes& shapes);
// Final norm plus the LM head shard the last virtual stage holds: untied models own one; tied models
// reuse the embedding when it is on the same stage (pp == 1, or a V) and hold a copy otherwise
// (Megatron's shared embedding, kept in sync by the embedding-group all-reduce).
int64_t head_params(const RankShapes& shapes);
// Σ over the layers one rank of `stage` holds (every model chunk) of `quantity` of the layer
// (&LayerParams::total, ::experts, ...).
int64_t stage_layer_sum(const RankShapes& shapes, const StageLayout& layout, int64_t stage,
                        int64_t (LayerParams::*quantity)() const);
// Everything one rank of `stage` holds, over all its model chunks.
int64_t stage_params(const RankShapes& shapes, const StageLayout& layout, int64_t stage);
// The part of stage_params that is expert weights.
int64_t stage_expert_params(const RankShapes& shapes, const StageLayout& layout, int64_t stage);
// MoE layers among the layers of virtual stage `v`.
int64_t moe_layer_count(const RankShapes& shapes, const StageLayout& layout, int64_t v);
// The model's parameters as the ranks hold them: every TP shard of every stage once, replicated
// tensors once, the tied LM head's copy not counted. Equals the exact count when the vocabulary
// divides evenly over TP.
int64_t model_params(const RankShapes& shapes, const StageLayout& layout);

}  // namespace trainsim::workload

#endif  // TRAINSIM_SIM_WORKLOAD_LAYOUT_H_
