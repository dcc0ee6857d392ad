#include "sim/workload/shapes.h"

#include <cmath>

#include "sim/workload/errors.h"

namespace trainsim::workload {
namespace {

// The expert shapes, once tp, sp and the token counts are set.
void derive_experts(const config::Moe& moe, const ParallelPlan& plan, RankShapes& s) {
  s.experts = moe.experts;
  s.top_k = moe.top_k;
  s.shared_experts = moe.shared_experts;
  s.dense_layers = moe.dense_layers;
  s.capacity_factor = moe.capacity_factor;
  s.ep = plan.ep();
  s.etp = plan.expert_tp();
  s.local_experts = s.experts / s.ep;
  s.expert_ffn_local = moe.expert_ffn_hidden / s.etp;
  s.shared_ffn_local = s.shared_experts * moe.expert_ffn_hidden / s.tp;
  // Each expert-parallel rank brings its expert tensor-parallel group's tokens (their sequence shards,
  // gathered: the whole TP group's when etp == tp).
  const double rows = static_cast<double>(s.batch * s.tokens_norm * s.etp * s.top_k) * s.capacity_factor *
                      static_cast<double>(s.ep) / static_cast<double>(s.experts);
  s.expert_rows = static_cast<int64_t>(std::ceil(rows - 1e-9));
}

}  // namespace

RankShapes derive_shapes(const config::Scenario& scenario, const ParallelPlan& plan) {
  TRAINSIM_WORKLOAD_CHECK(!broken_plan_rule(scenario)) << broken_plan_rule(scenario)->message;
  const config::Model& m = scenario.model;
  // The model's own rules, which the decoder holds (a scenario built in code may not).
  TRAINSIM_WORKLOAD_CHECK(m.layers > 0 && m.hidden > 0 && m.heads > 0 && m.kv_heads > 0 && m.head_dim > 0 &&
                          m.ffn_hidden > 0 && m.vocab > 0 && m.seq_len > 0 && m.heads % m.kv_heads == 0)
      << "model " << m.layers << " layers, hidden " << m.hidden << ", heads " << m.heads << "/" << m.kv_heads;
  const config::Parallelism& p = scenario.parallelism;
  RankShapes s;
  s.layers = m.layers;
  s.hidden = m.hidden;
  s.heads = m.heads;
  s.kv_heads = m.kv_heads;
  s.head_dim = m.head_dim;
  s.kv_lora_rank = m.mla.kv_lora_rank;
  s.q_lora_rank = m.mla.q_lora_rank;
  s.rope_head_dim = m.mla.rope_head_dim;
  s.v_head_dim = m.value_head_dim();
  s.ffn = m.ffn_hidden;
  s.vocab = m.vocab;
  s.seq = m.seq_len;
  s.swiglu = m.activation == config::Activation::kSwiglu;
  s.norm_bias = m.norm == config::Norm::kLayerNorm;
  s.rope = m.position_embedding == config::PositionEmbedding::kRope;
  s.learned_positions = m.position_embedding == config::PositionEmbedding::kLearned;
  s.tied_embeddings = m.tied_embeddings;
  s.linear_bias = m.linear_bias;
  s.scheme = config::sequence_scheme(p.sequence_parallel);
  s.tp = plan.degree(Axis::kTp);
  s.sp = plan.degree(Axis::kSp);
  s.dp = plan.degree(Axis::kDp);
  s.pp = plan.degree(Axis::kPp);
  s.vpp = p.vpp;
  s.v_shape = config::v_shaped_schedule(p.schedule);
  s.first_stage_layers = p.first_stage_layers;
  s.last_stage_layers = p.last_stage_layers;
  s.zero_stage = p.zero_stage;
  s.recompute = p.recompute;
  s.cpu_checkpointing = p.cpu_checkpointing;
  s.batch = scenario.training.micro_batch;
  s.fp8 = scenario.training.dtype == config::Dtype::kFp8;
  s.act_bytes = config::dtype_bytes(config::storage_dtype(scenario.training.dtype));
  s.grad_bytes = config::dtype_bytes(scenario.gradient_dtype());

  s.micro_batches = scenario.training.global_batch / (s.batch * s.dp);
  s.reshard_after_forward = scenario.reshard_after_forward();
  s.zero3_gather_bucket_elements = scenario.zero3_gather_bucket_bytes() / s.act_bytes;
  s.zero3_reduce_bucket_elements =
      scenario.zero3_bucketed_reduce() ? scenario.dp_bucket_bytes() / s.grad_bytes : 0;
  s.zero3_persistence_threshold = scenario.zero3_persistence_threshold();
  s.master_weight_shards = scenario.master_weight_shards();
  // Megatron-Core's FP8 weights replace bf16 ones; FSDP2's fp32 weight shards are never replaced.
  s.fp8_params = s.fp8 && scenario.training.fp8_params && !s.master_weight_shards;
  s.optimizer_passes = scenario.optimizer_passes();
  s.ffn_local = m.ffn_hidden / s.tp;
  s.vocab_local = (m.vocab + s.tp - 1) / s.tp;

  s.megatron_sp = s.tp > 1 && s.scheme.shards_over_tp;
  s.micro_batch_sync = scenario.micro_batch_sync();
  s.overlap_p2p_comm = p.schedule == config::Schedule::kInterleaved && scenario.overlap_p2p_comm();
  s.tp_comm_overlap = s.megatron_sp && scenario.parallelism.tp_comm_overlap;
  s.async_tp_reduce = scenario.parallelism.async_tp_reduce;
  s.dropout = s.learned_positions;
  s.bias_passes = s.linear_bias && s.learned_positions;
  s.fused_attention = scenario.attention_kernel() == config::AttentionKernel::kFused;
  s.tokens = m.seq_len / s.sp;
  s.tokens_norm = s.megatron_sp ? s.tokens / s.tp : s.tokens;
  if (m.moe.enabled()) {
    derive_experts(m.moe, plan, s);
    s.moe_host_sync = scenario.moe_host_sync();
  }
  s.qkv_heads = m.heads / s.tp;
  s.qkv_kv_heads = m.kv_heads / s.tp;
  s.attn_heads = s.qkv_heads;
  s.attn_kv_heads = s.qkv_kv_heads;

  if (s.scheme.heads_over_sp) {
    // With more ranks than K/V heads, each K/V head is repeated sp / kv_heads times after the QKV
    // projection, so that the all-to-all gives every rank one; autograd sums the copies' gradients
    // (DeepSpeed's UlyssesSPAttentionHF, deepspeed/runtime/sequence_parallel/ulysses_sp.py:
    // kv_replication_factor, repeat_interleave before the all-to-all).
    s.kv_replication = m.kv_heads < s.sp ? s.sp / m.kv_heads : 1;
    s.attn_heads = m.heads / s.sp;
    s.attn_kv_heads = m.kv_heads * s.kv_replication / s.sp;
  }
  if (s.scheme.exchanges_kv) {
    s.cp_all_gather = p.cp_comm == config::CpComm::kAllGather;
  }
  if (s.scheme.chunked) {
    const int64_t chunk = p.fpdt.chunk_tokens;
    s.fpdt_chunk = chunk;
    s.fpdt_chunks = m.seq_len / chunk;
    s.fpdt_local_chunk = chunk / s.sp;
    s.fpdt_ffn_chunk = s.fpdt_local_chunk / 2;
    s.fpdt_loss_chunk = s.fpdt_local_chunk / config::kFpdtLossPieces;
    // DeepSpeed runs the all-on-GPU implementation when offload is off or there is a single chunk.
    s.fpdt_offload = p.fpdt.offload && s.fpdt_chunks > 1;
    s.fpdt_host_sync = p.fpdt.host_sync;
  }
  return s;
}

}  // namespace trainsim::workload
