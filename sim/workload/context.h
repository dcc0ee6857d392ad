// Internal to sim/workload: what the per-scheme emitters share while one rank's graph is built,
// and the entry points each scheme file provides.
#ifndef TRAINSIM_SIM_WORKLOAD_CONTEXT_H_
#define TRAINSIM_SIM_WORKLOAD_CONTEXT_H_

#include <cstdint>
#include <functional>
#include <map>
#include <utility>
#include <vector>

#include "sim/config/scenario.h"
#include "sim/workload/activations.h"
#include "sim/workload/dp.h"
#include "sim/workload/layout.h"
#include "sim/workload/plan.h"
#include "sim/workload/shapes.h"
#include "sim/workload/writer.h"
#include "sim/workload/zero3.h"

namespace trainsim::workload {

// FPDT tensors a layer's forward keeps for its backward (fpdt.cc). Per chunk: pinned host copies
// with offload, GPU tensors without.
struct FpdtSaved {
  std::vector<BufferId> x, q, k, v, o, lse;
  std::vector<BufferId> prefetched;  // offload: Q0, K0, V0, O0, LSE0 fetched at the end of the forward
  BufferId ln_out = -1;              // without offload: the layer-norm output on the GPU
  BufferId final_out = -1;           // attention output after the output all-to-all (dense GEMM input)
  BufferId ln2_in = -1, ln2_out = -1;
};

// What a layer's forward leaves for its backward.
struct LayerState {
  BufferId input = -1;       // the layer input on the GPU (-1 while it is checkpointed on the host)
  BufferId host_input = -1;  // CPU activation checkpoint of the input
  BufferId stash = -1;       // tensors kept for backward (activations.h)
  FpdtSaved fpdt;
};

// What the B pass of a split backward (zero-bubble schedules) leaves for the W pass of the same
// micro-batch and virtual stage: weight-gradient GEMMs to run, gradients to report to the data-parallel
// reduction, and buffers (saved activations, output gradients) the GEMMs read.
struct HeldWeightGrads {
  struct Work {
    GraphWriter::Position position;
    OpLabel label = OpLabel::kQkv;
    int64_t m = 0, n = 0, k = 0;  // the GEMM; m == 0: `producer` already computed the gradients
    int32_t groups = 1;           // a grouped GEMM (experts)
    double useful = 1;
    OpId after = kNoOp;  // an op on another stream the GEMM waits for
    OpId producer = kNoOp;
    int64_t elements = 0;
    bool expert = false;  // reduced by the expert gradient sync
  };
  std::vector<Work> work;
  std::vector<BufferId> buffers;
};

struct BuildContext {
  const config::Scenario& scenario;
  const ParallelPlan& plan;
  int64_t rank;
  Coords coords;
  const RankShapes& shapes;
  const StageLayout& layout;
  LayerParams params;  // of a dense layer
  LayerActivationBytes act;
  LayerParams moe_params;  // of an MoE layer (zero for a dense model)
  LayerActivationBytes moe_act;
  GraphWriter& w;
  GradientSync& grads;
  GradientSync* expert_grads;  // MoE only: expert weights, reduced over the expert-data-parallel group
  ParamGatherer* zero3;        // ZeRO-3 only
  GroupKind grad_group;        // where gradients are reduced: dp, or dp_sp when sp > 1
  // This rank's share of the model-FLOPs convention for one layer's attention forward (non-causal
  // 2*b*heads*queries*seq*(d_qk + d_v)): Σ over the rank's attention blocks.
  double attention_model_flops = 0;
  std::map<std::pair<int64_t, int64_t>, LayerState> saved{};  // by (layer, micro-batch); layer -1: head
  // Split backward: the B pass in progress collects into `holding`; W passes consume `held`, by
  // (virtual stage, micro-batch).
  HeldWeightGrads* holding = nullptr;
  std::map<std::pair<int64_t, int64_t>, HeldWeightGrads> held{};
  std::map<int64_t, BufferId> turning{};  // by micro-batch: output at the turn of a V (ZB-V)

  LayerState& state(int64_t layer, int64_t micro_batch) { return saved[{layer, micro_batch}]; }
  const LayerParams& params_of(int64_t layer) const { return shapes.moe_layer(layer) ? moe_params : params; }
  const LayerActivationBytes& act_of(int64_t layer) const { return shapes.moe_layer(layer) ? moe_act : act; }
};

// Weight gradients of a backward (weight_grads.cc). Outside a B pass each acts at once; inside one
// it is held for the W pass.
// A weight-gradient GEMM (m x n x k) that finishes `elements` gradients; `after` as a dependency;
// `useful` the share of its FLOPs that counts as model FLOPs (GraphWriter::grouped_gemm).
void weight_grad_gemm(BuildContext& ctx, OpLabel label, int64_t m, int64_t n, int64_t k, int64_t elements,
                      OpId after = kNoOp, double useful = 1.0);
// The weight-gradient grouped GEMM of the local experts (GraphWriter::grouped_gemm), reported to the
// expert gradient sync.
void expert_weight_grad_gemm(BuildContext& ctx, OpLabel label, int64_t m, int64_t n, int64_t k,
                             int64_t elements, OpId after = kNoOp);
// `elements` gradients finished by `producer`, a kernel that computes input gradients too (norms,
// the embedding).
void gradients_done(BuildContext& ctx, OpId producer, int64_t elements);
// Frees `buffer` (on the compute stream) once no weight-gradient GEMM reads it any more.
void release_after_weight_grads(BuildContext& ctx, BufferId buffer);
// The W pass of (virtual stage, micro-batch): emits what its B pass held, then frees its buffers.
void weight_grad_pass(BuildContext& ctx, int64_t virtual_stage, int64_t micro_batch);

// A transformer layer (tp.cc dispatches to fpdt.cc for FPDT). The forward takes ownership of
// `input` (the layer's backward frees it) and returns the output buffer; `input_ready` is an op on
// another stream (a receive) the first kernel must wait for, or kNoOp.
BufferId layer_forward(BuildContext& ctx, int64_t layer, int64_t micro_batch, BufferId input,
                       OpId input_ready);
// The backward; `grad_ready` as `input_ready`. Returns the op that produced the input gradient.
OpId layer_backward(BuildContext& ctx, int64_t layer, int64_t micro_batch, OpId grad_ready);

// The frame both layer kinds (dense, FPDT) put around their forward's body: the writer at (layer,
// micro-batch) in the forward, ZeRO-3's gather of the layer's `param_elements`, and the layer input
// kept for the backward in the layer's state; with cpu_checkpointing it is copied to the host
// (DeepSpeed's checkpoint_in_cpu, synchronously: `input_bytes` once `input_ready` is done).
struct LayerForwardFrame {
  OpId params;  // the gather, kNoOp without ZeRO-3
  LayerState& state;
};
LayerForwardFrame open_layer_forward(BuildContext& ctx, int64_t layer, int64_t micro_batch, BufferId input,
                                     OpId input_ready, int64_t param_elements, double input_bytes);
// After the body: ZeRO-3 lets the parameters go; a host-checkpointed input leaves the GPU.
void close_layer_forward(BuildContext& ctx, LayerState& state);
// Before a backward: the forward's state of (layer, micro-batch), taken out of the context, with the
// writer at (layer, micro-batch) in the backward and ZeRO-3's gather of `param_elements` (kNoOp
// without ZeRO-3).
struct LayerBackwardFrame {
  LayerState state;
  OpId params;
};
LayerBackwardFrame open_layer_backward(BuildContext& ctx, int64_t layer, int64_t micro_batch,
                                       int64_t param_elements);
// Under full recomputation with cpu_checkpointing, the layer input (`input_bytes`) brought back from
// the host before the forward is replayed.
void fetch_checkpointed_input(BuildContext& ctx, LayerState& state, double input_bytes);

// Megatron's "g" after a row-parallel GEMM: all-reduce, or reduce-scatter under Megatron-SP, of
// `bytes` (the full tensor; default: one hidden state of the GEMM region).
OpId tp_reduce(BuildContext& ctx, OpId after, double bytes);
inline OpId tp_reduce(BuildContext& ctx, OpId after) {
  return tp_reduce(ctx, after, ctx.shapes.hidden_bytes());
}
// The backward of a column-parallel GEMM whose input gradient the compute stream has just produced:
// the TP reduction of that gradient (`bytes`, as tp_reduce) and the GEMM's weight gradient, which
// `weight_grad` emits, in the order RankShapes::async_tp_reduce gives (the reduction first, running
// while the weight gradient computes; or the weight gradient first). Returns the reduction.
OpId reduce_input_grad(BuildContext& ctx, double bytes, const std::function<void()>& weight_grad);
inline OpId reduce_input_grad(BuildContext& ctx, const std::function<void()>& weight_grad) {
  return reduce_input_grad(ctx, ctx.shapes.hidden_bytes(), weight_grad);
}
// Under Megatron-SP, the all-gather (output `bytes`) in front of a column-parallel GEMM, or of a
// gradient entering a row-parallel GEMM in backward; nothing (kNoOp) otherwise.
OpId tp_gather(BuildContext& ctx, OpId after, double bytes);
inline OpId tp_gather(BuildContext& ctx, OpId after) {
  return tp_gather(ctx, after, ctx.shapes.hidden_bytes());
}

// A tensor-parallel MLP of `ffn_local` intermediate columns per rank (the dense MLP, or an MoE
// layer's shared experts), from its input norm's output: [SP: all-gather], FC1, activation, FC2,
// all-reduce (reduce-scatter under SP). Returns the reduction.
OpId mlp_forward(BuildContext& ctx, int64_t ffn_local);
struct MlpGradients {
  int64_t ffn_local = 0;
  int64_t fc1_elements = 0, fc2_elements = 0;  // the weight (and bias) gradients each GEMM finishes
  bool bias_passes = false;                    // the bias-GeLU backward re-reads for its bias gradient
};
// Its backward from the output gradient (`grad_ready`, and `params`: ZeRO-3's gather or kNoOp) to the
// input gradient's reduction, which it returns; under SP it gathers the saved input again for FC1's
// weight gradient.
OpId mlp_backward(BuildContext& ctx, OpId grad_ready, OpId params, const MlpGradients& mlp);

// Multi-head latent attention's projections (mla.cc), from the input norm's output to Q, K and V
// with RoPE applied, in the writer's current phase: the down projections of the queries and the
// keys/values (replicated weights on the rank's sequence shard, or on every token without
// Megatron-SP), the latents' norms, [SP: all-gather of each latent], the up projections, RoPE.
void mla_forward(BuildContext& ctx);
// Its backward, from the attention core's input gradients (`core_done`) to the input gradient of the
// down projections. Returns the op the input norm's backward waits for.
OpId mla_backward(BuildContext& ctx, OpId core_done, const LayerParams& params);
// What a zero-bubble W pass of the MLA projections reads, in bytes: the inputs and output gradients
// of the down and up projections.
double mla_weight_grad_operands(const RankShapes& shapes);

// The attention core between the QKV GEMM (and RoPE) and the output projection, in the writer's
// current phase (forward or recompute), and its backward. Local attention lives in tp.cc.
void local_attention_forward(BuildContext& ctx);
void local_attention_backward(BuildContext& ctx);
void ulysses_attention_forward(BuildContext& ctx);
void ulysses_attention_backward(BuildContext& ctx);
void ring_attention_forward(BuildContext& ctx, int64_t layer, int64_t micro_batch);
void ring_attention_backward(BuildContext& ctx, int64_t layer, int64_t micro_batch);
void all_gather_attention_forward(BuildContext& ctx);
void all_gather_attention_backward(BuildContext& ctx);

// The MLP of an MoE layer (moe.cc), from its input norm's output to the output before the residual
// add, in the writer's current phase: router, token dispatch (all-to-all over ep, all-gather over
// tp), the local experts, the combine, and the shared experts. Returns the op the residual add
// waits for.
OpId moe_forward(BuildContext& ctx);
// Its backward, from the gradient of its output (`grad_ready`) to the gradient of its input (before
// the norm's backward). Returns the op the norm's backward waits for.
OpId moe_backward(BuildContext& ctx, OpId grad_ready);
// What a zero-bubble W pass of an MoE layer's MLP reads, in bytes: the inputs and output gradients
// of the expert, shared-expert and router GEMMs.
double moe_weight_grad_operands(const RankShapes& shapes);

// FPDT layer (fpdt.cc), same contract as layer_forward / layer_backward.
BufferId fpdt_layer_forward(BuildContext& ctx, int64_t layer, int64_t micro_batch, BufferId input,
                            OpId input_ready);
OpId fpdt_layer_backward(BuildContext& ctx, int64_t layer, int64_t micro_batch, OpId grad_ready);

// FPDT's chunked logits and loss (fpdt.cc), same contract as head_forward / head_backward.
void fpdt_head_forward(BuildContext& ctx, int64_t micro_batch, BufferId input, OpId input_ready);
OpId fpdt_head_backward(BuildContext& ctx, int64_t micro_batch);

// Embedding (first virtual stage) and head (last virtual stage), embedding.cc. The embedding
// forward returns the first layer's input; the head forward takes ownership of the last
// layer's output. Backward functions return the op producing their output gradient.
struct EmbeddingOutput {
  BufferId buffer;  // the first layer's input
  OpId ready;       // an op on another stream the first layer must wait for, or kNoOp
};
EmbeddingOutput embedding_forward(BuildContext& ctx, int64_t micro_batch);
OpId embedding_backward(BuildContext& ctx, int64_t micro_batch, OpId grad_ready);
void head_forward(BuildContext& ctx, int64_t micro_batch, BufferId input, OpId input_ready);
OpId head_backward(BuildContext& ctx, int64_t micro_batch);

// Parameters of the embedding and head units on this rank, as ZeRO-3 gathers them (the tied LM
// head gathers the embedding matrix again).
int64_t embedding_unit_elements(const RankShapes& shapes);
int64_t head_unit_elements(const RankShapes& shapes);

}  // namespace trainsim::workload

#endif  // TRAINSIM_SIM_WORKLOAD_CONTEXT_H_
