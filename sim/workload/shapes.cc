#include "sim/workload/shapes.h"

#include <cmath>

#include <fmt/format.h>

#include "sim/workload/errors.h"

namespace trainsim::workload {
namespace {

using config::SequenceParallel;

void require(bool ok, const char* setting, const std::string& message) {
  if (!ok) throw PlanError(setting, message);
}

bool divides(int64_t d, int64_t n) { return d > 0 && n % d == 0; }

// The expert shapes, once tp, sp and the token counts are set.
void derive_experts(const config::Moe& moe, const ParallelPlan& plan, RankShapes& s) {
  s.experts = moe.experts;
  s.top_k = moe.top_k;
  s.shared_experts = moe.shared_experts;
  s.dense_layers = moe.dense_layers;
  s.capacity_factor = moe.capacity_factor;
  s.ep = plan.ep();
  s.etp = plan.expert_tp();
  require(s.top_k >= 1 && s.top_k <= s.experts, "model.moe.top_k",
          fmt::format("top_k {} must be between 1 and the {} experts", s.top_k, s.experts));
  require(s.capacity_factor >= 1, "model.moe.capacity_factor", "must be at least 1");
  require(divides(s.ep, s.experts), "parallelism.ep",
          fmt::format("ep {} must divide the {} experts", s.ep, s.experts));
  require(divides(s.etp, moe.expert_ffn_hidden), "parallelism.expert_tp",
          fmt::format("expert_tp {} must divide moe.expert_ffn_hidden {}", s.etp, moe.expert_ffn_hidden));
  require(divides(s.tp, s.shared_experts * moe.expert_ffn_hidden), "parallelism.tp",
          fmt::format("tp {} must divide the shared experts' {} x {}", s.tp, s.shared_experts,
                      moe.expert_ffn_hidden));
  require(s.tp == 1 || s.megatron_sp, "parallelism.sequence_parallel",
          "a mixture of experts with tp > 1 needs megatron sequence parallelism");
  require(s.scheme != SequenceParallel::kFpdt, "parallelism.sequence_parallel",
          "a mixture of experts is not modelled with FPDT");
  require(s.zero_stage != 3, "parallelism.zero_stage", "a mixture of experts is not modelled with ZeRO-3");
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
  const config::Model& m = scenario.model;
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
  s.scheme = p.sequence_parallel;
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

  require(m.layers > 0 && m.hidden > 0 && m.heads > 0 && m.kv_heads > 0 && m.head_dim > 0 &&
              m.ffn_hidden > 0 && m.vocab > 0 && m.seq_len > 0,
          "model",
          "layers, hidden, heads, kv_heads, head_dim, ffn_hidden, vocab and seq_len must all be positive");
  require(divides(m.kv_heads, m.heads), "model.kv_heads",
          fmt::format("{} query heads are not a multiple of {} key/value heads", m.heads, m.kv_heads));
  require(s.batch > 0 && divides(s.batch * s.dp, scenario.training.global_batch), "training.global_batch",
          fmt::format("global batch {} is not a multiple of micro_batch {} x dp {}",
                      scenario.training.global_batch, s.batch, s.dp));
  s.micro_batches = scenario.training.global_batch / (s.batch * s.dp);
  require(p.zero_stage >= 0 && p.zero_stage <= 3, "parallelism.zero_stage", "must be 0, 1, 2 or 3");
  const std::string zero_error = scenario.zero_plan_error();
  require(zero_error.empty(), "parallelism.zero_stage", zero_error);
  s.reshard_after_forward = scenario.reshard_after_forward();
  s.master_weight_shards = scenario.master_weight_shards();
  require(!(p.cpu_checkpointing && p.recompute != config::Recompute::kFull), "parallelism.cpu_checkpointing",
          "CPU checkpointing keeps the inputs of fully recomputed layers on the host; set recompute: full");

  // Pipeline schedule.
  require(s.vpp >= 1, "parallelism.vpp", "must be at least 1");
  if (p.schedule == config::Schedule::kInterleaved) {
    require(s.vpp > 1 && s.pp > 1, "parallelism.vpp",
            "the interleaved schedule needs pp > 1 and vpp > 1 model chunks per stage");
  } else if (config::split_backward_schedule(p.schedule)) {
    require(s.pp > 1, "parallelism.pp", "the zero-bubble schedules need pp > 1");
    require(s.scheme != config::SequenceParallel::kFpdt, "parallelism.schedule",
            "the zero-bubble schedules do not split FPDT's backward; use 1f1b or interleaved");
    require(!s.v_shape || s.vpp == 2, "parallelism.vpp",
            "the V-shaped schedules (zb-v, dualpipev) run vpp = 2 model chunks per stage");
  } else {
    require(s.vpp == 1, "parallelism.vpp",
            "vpp > 1 needs schedule: interleaved, zero-bubble, zb-v or dualpipev");
  }
  if (config::micro_batches_multiple_of_pp(p.schedule, s.vpp)) {
    require(divides(s.pp, s.micro_batches), "training.global_batch",
            fmt::format("with vpp > 1 the micro-batches per replica ({}) must be a multiple of pp ({}) "
                        "(Narayanan et al. 2021, Sec. 2.2.2)",
                        s.micro_batches, s.pp));
  }
  require(s.layers >= s.pp * s.vpp, "parallelism.pp",
          fmt::format("{} layers cannot fill pp {} x vpp {} pipeline stages", s.layers, s.pp, s.vpp));

  // Tensor parallelism.
  require(divides(s.tp, m.heads) && divides(s.tp, m.kv_heads), "parallelism.tp",
          fmt::format("tp {} must divide heads {} and kv_heads {}", s.tp, m.heads, m.kv_heads));
  require(divides(s.tp, m.ffn_hidden), "parallelism.tp",
          fmt::format("tp {} must divide ffn_hidden {}", s.tp, m.ffn_hidden));
  s.ffn_local = m.ffn_hidden / s.tp;
  s.vocab_local = (m.vocab + s.tp - 1) / s.tp;

  const bool sequence_scheme = s.scheme == SequenceParallel::kUlysses ||
                               s.scheme == SequenceParallel::kRing || s.scheme == SequenceParallel::kFpdt;
  require(
      sequence_scheme || s.sp == 1, "parallelism.sp",
      fmt::format("sp {} needs sequence_parallel ulysses, ring or fpdt (megatron shards over the tp group)",
                  s.sp));
  s.megatron_sp =
      s.tp > 1 && (s.scheme == SequenceParallel::kMegatron || s.scheme == SequenceParallel::kRing);
  s.tp_comm_overlap = s.megatron_sp && scenario.parallelism.tp_comm_overlap;
  s.async_tp_reduce = scenario.parallelism.async_tp_reduce;
  s.dropout = s.learned_positions;
  s.bias_passes = s.linear_bias && s.learned_positions;
  s.fused_attention = scenario.attention_kernel() == config::AttentionKernel::kFused;
  require(s.fused_attention || (s.scheme != SequenceParallel::kRing && s.scheme != SequenceParallel::kFpdt),
          "model.attention",
          "ring attention and FPDT need a fused attention kernel (model.attention: fused)");

  require(divides(s.sp, m.seq_len), "parallelism.sp",
          fmt::format("sp {} must divide seq_len {}", s.sp, m.seq_len));
  s.tokens = m.seq_len / s.sp;
  if (s.megatron_sp) {
    require(divides(s.tp, s.tokens), "parallelism.tp",
            fmt::format("sequence-sharded TP regions need tp {} to divide the {} tokens per rank", s.tp,
                        s.tokens));
  }
  s.tokens_norm = s.megatron_sp ? s.tokens / s.tp : s.tokens;
  if (m.moe.enabled()) derive_experts(m.moe, plan, s);
  s.qkv_heads = m.heads / s.tp;
  s.qkv_kv_heads = m.kv_heads / s.tp;
  s.attn_heads = s.qkv_heads;
  s.attn_kv_heads = s.qkv_kv_heads;

  if (s.scheme == SequenceParallel::kUlysses || s.scheme == SequenceParallel::kFpdt) {
    require(
        s.tp == 1, "parallelism.tp",
        "DeepSpeed-Ulysses and FPDT run without tensor parallelism; set tp: 1 and use sp for the sequence");
    require(
        divides(s.sp, m.heads) && (divides(s.sp, m.kv_heads) || divides(m.kv_heads, s.sp)), "parallelism.sp",
        fmt::format("the all-to-all scatters heads: sp {} must divide heads {}, and divide kv_heads {} or "
                    "be a multiple of it",
                    s.sp, m.heads, m.kv_heads));
    // With more ranks than K/V heads, each K/V head is repeated sp / kv_heads times after the QKV
    // projection, so that the all-to-all gives every rank one; autograd sums the copies' gradients
    // (DeepSpeed's UlyssesSPAttentionHF, deepspeed/runtime/sequence_parallel/ulysses_sp.py:
    // kv_replication_factor, repeat_interleave before the all-to-all).
    s.kv_replication = m.kv_heads < s.sp ? s.sp / m.kv_heads : 1;
    s.attn_heads = m.heads / s.sp;
    s.attn_kv_heads = m.kv_heads * s.kv_replication / s.sp;
  }
  if (s.scheme == SequenceParallel::kRing) {
    s.cp_all_gather = p.cp_comm == config::CpComm::kAllGather;
    require(
        divides(2 * s.sp, m.seq_len), "parallelism.sp",
        fmt::format("load-balanced ring attention splits the sequence in 2 x sp = {} chunks; it must divide "
                    "seq_len {}",
                    2 * s.sp, m.seq_len));
  }
  if (s.scheme == SequenceParallel::kFpdt) {
    require(
        s.pp == 1, "parallelism.pp",
        "FPDT calls dist.barrier() on the world group every chunk, which deadlocks across pipeline stages; "
        "set pp: 1");
    const int64_t chunk = p.fpdt.chunk_tokens;
    require(chunk > 0 && divides(chunk, m.seq_len), "parallelism.fpdt.chunk_tokens",
            fmt::format("chunk_tokens {} must divide seq_len {} (seed-papers.md A2)", chunk, m.seq_len));
    require(divides(s.sp, chunk), "parallelism.fpdt.chunk_tokens",
            fmt::format("chunk_tokens {} must be a multiple of sp {}", chunk, s.sp));
    s.fpdt_chunk = chunk;
    s.fpdt_chunks = m.seq_len / chunk;
    s.fpdt_local_chunk = chunk / s.sp;
    require(divides(32, s.fpdt_local_chunk), "parallelism.fpdt.chunk_tokens",
            fmt::format(
                "FPDT chunks the loss in chunk_tokens / sp / 32 tokens; {} local tokens per chunk are not a "
                "multiple of 32",
                s.fpdt_local_chunk));
    s.fpdt_ffn_chunk = s.fpdt_local_chunk / 2;
    s.fpdt_loss_chunk = s.fpdt_local_chunk / 32;
    // DeepSpeed runs the all-on-GPU implementation when offload is off or there is a single chunk.
    s.fpdt_offload = p.fpdt.offload && s.fpdt_chunks > 1;
    s.fpdt_host_sync = p.fpdt.host_sync;
    require(!s.mla(), "model.mla",
            "the FPDT chunk loop projects standard Q/K/V; use ulysses or ring with MLA");
  }
  return s;
}

}  // namespace trainsim::workload
