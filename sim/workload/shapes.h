// Per-rank tensor shapes of one micro-batch, derived from a scenario and checked for what the graph
// builder can express. Every emitter reads its sizes from here.
//
// Modelling choices the scenario format has no key for (yet):
//   * GPT-style models (learned position embeddings) train with dropout (Megatron's default
//     hidden/attention dropout 0.1), as in Korthikanti et al. 2022 Table 2; RoPE models (Llama,
//     GPT-NeoX) have none. The attention kernel is the scenario's (model.attention, auto resolved
//     from the framework and the model: config::Scenario::attention_kernel); ring attention and FPDT need the
//     fused one (FPDT calls flash-attn, seed-papers.md A2; Transformer Engine's context parallelism requires
//     fused attention), Ulysses wraps whichever the model uses (DeepSpeed's DistributedAttention).
//   * The same GPT-style models run Megatron-LM's 2021-22 bias handling (Korthikanti et al. 2022):
//     the QKV bias is added by its own pass over the GEMM output (F.linear on a 3-D input: matmul,
//     then add_), and every bias gradient is its own reduction over the tokens (grad_output.sum in
//     the column-parallel backward; autograd's sum for the biases of the fused bias-GeLU and
//     bias-dropout-add). Fused stacks (Transformer Engine) fold both into GEMM epilogues.
//   * Ring attention with tp > 1 also shards the tensor-parallel regions along the sequence
//     (Megatron-SP), as Megatron-LM recipes with context parallelism do.
//   * The vocabulary is split evenly over TP ranks, rounding up (no padding to multiples of 128).
#ifndef TRAINSIM_SIM_WORKLOAD_SHAPES_H_
#define TRAINSIM_SIM_WORKLOAD_SHAPES_H_

#include <cstdint>

#include "sim/config/scenario.h"
#include "sim/workload/plan.h"

namespace trainsim::workload {

struct RankShapes {
  // Model.
  int64_t layers = 0, hidden = 0, heads = 0, kv_heads = 0, head_dim = 0, ffn = 0, vocab = 0, seq = 0;
  bool swiglu = false;
  bool norm_bias = false;  // LayerNorm (weight + bias) vs RMSNorm (weight)
  bool rope = false;
  bool learned_positions = false;
  bool tied_embeddings = false;
  bool linear_bias = false;
  bool dropout = false;
  bool fused_attention = false;
  bool bias_passes = false;  // separate bias-add and bias-gradient passes (see above)

  // Plan.
  config::SequenceScheme scheme;  // of parallelism.sequence_parallel
  bool cp_all_gather = false;     // context parallelism (ring) exchanges K/V by all-gather, not send/receive
  // The interleaved schedule posts a step's pipeline receive after the previous step of its pass
  // (Scenario::overlap_p2p_comm), not after the step just before it.
  bool overlap_p2p_comm = false;
  int64_t tp = 1, sp = 1, dp = 1, pp = 1, vpp = 1;
  bool v_shape = false;  // ZB-V, DualPipeV: stage s runs virtual stages s and 2pp - 1 - s (layout.h)
  int64_t first_stage_layers = 0, last_stage_layers = 0;  // 0: the split of layout.h
  // Where gradients are reduced and ZeRO shards live: dp, or dp_sp when sp > 1; and the same for
  // expert weights over their expert-data-parallel group (edp, edp_sp).
  GroupKind grad_group() const { return sp > 1 ? GroupKind::kDpSp : GroupKind::kDp; }
  GroupKind expert_grad_group() const { return sp > 1 ? GroupKind::kEdpSp : GroupKind::kEdp; }
  // Whether the LM head runs on the embedding's stage (a tied head then reuses its matrix).
  bool head_beside_embedding() const { return pp == 1 || v_shape; }
  bool megatron_sp = false;      // norm/dropout/residual regions sharded along the sequence over TP
  bool tp_comm_overlap = false;  // SP's all-gathers and reduce-scatters overlap their GEMMs
  // A column-parallel GEMM's input-gradient reduction runs with its weight gradient (true) or after
  // it (config::Parallelism::async_tp_reduce).
  bool async_tp_reduce = true;
  int zero_stage = 0;
  // ZeRO-3: parameters gathered for a forward are freed after it and gathered again for the backward
  // (true), or kept until the backward (false; with pp > 1 until the chunk's last backward, see zero3.h).
  bool reshard_after_forward = true;
  // ZeRO-3 under pipeline parallelism (torchtitan's FSDP2 under torch.distributed.pipelining): each
  // unit's parameters are gathered once per iteration and its gradients accumulated unsharded, then
  // reduce-scattered after the chunk's last backward.
  bool zero3_per_iteration() const { return zero_stage == 3 && pp > 1; }
  // ZeRO-3's collective granularity (config::Scenario::zero3_gather_bucket_bytes): the most elements
  // one all-gather collects (+infinity: one all-gather per unit), the reduction bucket gradients join
  // in elements (0: each unit reduce-scattered on its own), and the size under which a tensor stays
  // whole on every rank.
  double zero3_gather_bucket_elements = 0;
  double zero3_reduce_bucket_elements = 0;
  int64_t zero3_persistence_threshold = 0;
  // Whether ZeRO-3 keeps a parameter tensor of `elements` whole on every rank, never gathered.
  bool zero3_persistent(int64_t elements) const { return elements < zero3_persistence_threshold; }
  // ZeRO-3's weight shards are the fp32 master weights (FSDP2 in mixed precision; model_state.h).
  bool master_weight_shards = false;
  config::Scenario::OptimizerPasses optimizer_passes;  // the step's passes besides the update
  config::Recompute recompute = config::Recompute::kNone;

  // Per rank, per micro-batch.
  int64_t batch = 1;          // micro-batch (sequences)
  int64_t tokens = 0;         // positions each rank's GEMMs process: seq / sp
  int64_t tokens_norm = 0;    // positions in norm/residual regions: tokens / tp under Megatron-SP
  int64_t attn_heads = 0;     // query heads in this rank's attention kernels
  int64_t attn_kv_heads = 0;  // key/value heads in this rank's attention kernels
  int64_t qkv_heads = 0;      // query heads of this rank's QKV GEMM output
  int64_t qkv_kv_heads = 0;   // key/value heads of this rank's QKV GEMM output
  // Copies of each K/V head that Ulysses and FPDT send through their all-to-all when sp exceeds the K/V
  // heads (sp / kv_heads, each rank then gets one); 1 otherwise.
  int64_t kv_replication = 1;
  int64_t ffn_local = 0;      // ffn / tp
  int64_t vocab_local = 0;    // ceil(vocab / tp)
  int64_t micro_batches = 0;  // per iteration and data-parallel replica
  bool fp8 = false;  // fp8 training: linear layers' GEMMs in fp8, the rest in bf16 (config::storage_dtype)
  // fp8 training with the linear layers' weights in fp8 only (training.fp8_params; never with
  // master_weight_shards, whose fp32 shards are the weights).
  bool fp8_params = false;
  int act_bytes = 2;   // bytes per activation/weight element (the training dtype's storage dtype)
  int grad_bytes = 2;  // bytes per gradient element

  // FPDT (seed-papers.md A2): u chunks of c global tokens, c_l = c / sp local tokens each.
  int64_t fpdt_chunks = 1;
  int64_t fpdt_chunk = 0;        // c
  int64_t fpdt_local_chunk = 0;  // c_l
  bool fpdt_offload = false;
  bool fpdt_host_sync = true;
  int64_t fpdt_ffn_chunk = 0;   // FPDT_FFN chunk: chunk_tokens / sp / 2 local tokens
  int64_t fpdt_loss_chunk = 0;  // FPDT_LogitsLoss chunk: chunk_tokens / sp / 32 local tokens

  bool cpu_checkpointing = false;

  // Mixture of experts (config::Moe); experts == 0 for a dense model. Routed experts are split over
  // the etp ranks of their expert tensor-parallel group and spread over ep ranks; the shared experts
  // are a dense MLP split over tp.
  int64_t experts = 0, top_k = 0, shared_experts = 0, dense_layers = 0;
  int64_t ep = 1;
  int64_t etp = 1;
  int64_t local_experts = 0;     // experts / ep
  int64_t expert_ffn_local = 0;  // expert_ffn_hidden / etp
  int64_t shared_ffn_local = 0;  // shared_experts x expert_ffn_hidden / tp
  double capacity_factor = 1;
  // Token rows each local expert processes per micro-batch (the expert TP group's tokens after the
  // dispatch, sized for the busiest expert):
  // ceil(batch * tokens_norm * etp * top_k * capacity * ep / experts).
  int64_t expert_rows = 0;
  // The host waits for each MoE layer's token counts before issuing its dispatch (Scenario::moe_host_sync).
  bool moe_host_sync = false;
  // The host synchronises the device before each micro-batch's forward (Scenario::micro_batch_sync).
  bool micro_batch_sync = false;
  bool moe_layer(int64_t layer) const { return experts > 0 && layer >= dense_layers; }
  // Bytes of this rank's share of the dispatched tokens (the token all-to-all's buffer):
  // e * batch * tokens_norm * top_k * capacity * hidden.
  double dispatch_bytes() const {
    return static_cast<double>(act_bytes) * static_cast<double>(batch * tokens_norm * top_k) *
           capacity_factor * static_cast<double>(hidden);
  }

  // Multi-head latent attention (config::Mla): kv_lora_rank == 0 for standard attention, whose
  // query/key and value heads are all head_dim (rope_head_dim 0, v_head_dim head_dim).
  int64_t kv_lora_rank = 0, q_lora_rank = 0, rope_head_dim = 0, v_head_dim = 0;
  bool mla() const { return kv_lora_rank > 0; }
  int64_t qk_head_dim() const { return head_dim + rope_head_dim; }
  // K/V heads of this rank's tokens that Ulysses' all-to-all carries: its QKV output's, repeated.
  int64_t a2a_kv_heads() const { return qkv_kv_heads * kv_replication; }
  // Widths (elements per token) of this rank's attention tensors: the queries, the keys and values
  // together (the QKV GEMM's output is both), and the attention output (the projection's input).
  int64_t q_width() const { return qkv_heads * qk_head_dim(); }
  int64_t kv_width() const { return qkv_kv_heads * (qk_head_dim() + v_head_dim); }
  int64_t attn_out_width() const { return qkv_heads * v_head_dim; }
  // MLA's per-token widths: the key/value latent with the shared rotary key, the query projection's
  // input (the query latent, or the hidden state without one), and this rank's key/value up
  // projection output.
  int64_t kv_latent() const { return kv_lora_rank + rope_head_dim; }
  int64_t query_input() const { return q_lora_rank > 0 ? q_lora_rank : hidden; }
  int64_t kv_up_width() const { return qkv_kv_heads * (head_dim + v_head_dim); }

  // Convenience: e * b * tokens * hidden, the size of one hidden-state tensor in GEMM regions.
  double hidden_bytes() const { return static_cast<double>(act_bytes) * batch * tokens * hidden; }
  double hidden_norm_bytes() const { return static_cast<double>(act_bytes) * batch * tokens_norm * hidden; }
};

// The shapes of `plan` (make_plan(scenario), which refuses scenarios that break a plan rule; one that
// breaks one here is a bug of the caller).
RankShapes derive_shapes(const config::Scenario& scenario, const ParallelPlan& plan);

}  // namespace trainsim::workload

#endif  // TRAINSIM_SIM_WORKLOAD_SHAPES_H_
