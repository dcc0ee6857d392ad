// Sequence parallelism against the model: Megatron's sharding over the tp group, DeepSpeed-Ulysses'
// head all-to-all, load-balanced ring attention, and FPDT's chunks.
#include <fmt/format.h>

#include "sim/config/limits.h"
#include "sim/config/plan_rules_groups.h"
#include "sim/config/units.h"

namespace trainsim::config::internal {
namespace {

bool is(const Scenario& s, SequenceParallel scheme) { return s.parallelism.sequence_parallel == scheme; }

// The schemes that shard the sequence over their own sp group.
bool sp_scheme(const Scenario& s) {
  return is(s, SequenceParallel::kUlysses) || is(s, SequenceParallel::kRing) ||
         is(s, SequenceParallel::kFpdt);
}

// The schemes that scatter heads with an all-to-all.
bool head_scatter(const Scenario& s) {
  return is(s, SequenceParallel::kUlysses) || is(s, SequenceParallel::kFpdt);
}

bool chunk_divides_sequence(const Scenario& s) {
  const int64_t c = s.parallelism.fpdt.chunk_tokens;
  return c > 0 && c <= s.model.seq_len && s.model.seq_len % c == 0;
}

}  // namespace

void add_sequence_rules(std::vector<PlanRule>& rules) {
  rules.push_back(
      {"sequence-parallel-needs-fused-attention",
       {"parallelism.sequence_parallel", "model.attention"},
       kModelAndPlan,
       [](const Scenario& s) -> std::optional<Breach> {
         if ((!is(s, SequenceParallel::kRing) && !is(s, SequenceParallel::kFpdt)) ||
             s.attention_kernel() != AttentionKernel::kUnfused) {
           return {};
         }
         return fmt::format(
             "sequence_parallel: {} needs a fused attention kernel (FPDT calls flash-attn's "
             "forward and backward per chunk; ring attention merges the per-block outputs by their "
             "log-sum-exp, which only a fused kernel returns), but model.attention is unfused{}; "
             "set model.attention: fused",
             to_string(s.parallelism.sequence_parallel),
             s.model.attention == AttentionKernel::kAuto
                 ? fmt::format(" (auto: a model with learned positions under framework {})",
                               to_string(s.framework))
                 : "");
       }});
  rules.push_back({"sp-needs-sequence-scheme",
                   {"parallelism.sp", "parallelism.sequence_parallel"},
                   kParallelismSection,
                   [](const Scenario& s) -> std::optional<Breach> {
                     if (sp_scheme(s) || s.parallelism.sp == 1) return {};
                     return fmt::format(
                         "sp {} needs sequence_parallel ulysses, ring or fpdt (megatron sequence parallelism "
                         "reuses the tp group); set sp: 1 or choose one of those",
                         s.parallelism.sp);
                   }});
  rules.push_back({"sp-divides-sequence",
                   {"parallelism.sp", "model.seq_len"},
                   kModelAndPlan,
                   [](const Scenario& s) -> std::optional<Breach> {
                     if (s.model.seq_len % s.parallelism.sp == 0) return {};
                     return fmt::format("seq_len {} must be a multiple of sp {}", s.model.seq_len,
                                        s.parallelism.sp);
                   }});
  rules.push_back({"tp-divides-sequence-shard",
                   {"parallelism.tp", "model.seq_len"},
                   kModelAndPlan,
                   [](const Scenario& s) -> std::optional<Breach> {
                     // Megatron's sequence parallelism (also under ring attention) shards the norm,
                     // dropout and residual regions of each rank's tokens over the tp group.
                     const Parallelism& p = s.parallelism;
                     const bool megatron = is(s, SequenceParallel::kMegatron);
                     if ((!megatron && !(is(s, SequenceParallel::kRing) && p.tp > 1)) ||
                         s.model.seq_len % p.sp != 0 || (s.model.seq_len / p.sp) % p.tp == 0) {
                       return {};
                     }
                     if (megatron) {
                       return fmt::format(
                           "megatron sequence parallelism splits the {} tokens over tp {}; seq_len must be a "
                           "multiple of tp",
                           s.model.seq_len, p.tp);
                     }
                     return fmt::format(
                         "ring attention with tp {} shards each rank's seq_len / sp = {} tokens over the tp "
                         "group (Megatron sequence parallelism); seq_len must be a multiple of sp·tp = {}",
                         p.tp, s.model.seq_len / p.sp, p.sp * p.tp);
                   }});
  rules.push_back({"ring-chunks-divide-sequence",
                   {"parallelism.sp", "model.seq_len"},
                   kModelAndPlan,
                   [](const Scenario& s) -> std::optional<Breach> {
                     const int64_t chunks = 2 * s.parallelism.sp;
                     if (!is(s, SequenceParallel::kRing) || s.model.seq_len % chunks == 0) return {};
                     return fmt::format(
                         "load-balanced ring attention splits the sequence in 2·sp = {} chunks (Megatron's "
                         "context parallelism); seq_len {} must be a multiple of {}",
                         chunks, s.model.seq_len, chunks);
                   }});
  rules.push_back({"head-scatter-without-tp",
                   {"parallelism.tp", "parallelism.sequence_parallel"},
                   kParallelismSection,
                   [](const Scenario& s) -> std::optional<Breach> {
                     if (!head_scatter(s) || s.parallelism.tp == 1) return {};
                     return fmt::format(
                         "sequence_parallel: {} is modelled without tensor parallelism (DeepSpeed runs "
                         "Ulysses and FPDT over the sequence group alone); set tp: 1 and use sp",
                         to_string(s.parallelism.sequence_parallel));
                   }});
  rules.push_back({"sp-divides-heads",
                   {"parallelism.sp", "model.heads"},
                   kModelAndPlan,
                   [](const Scenario& s) -> std::optional<Breach> {
                     if (!head_scatter(s) || s.model.heads % s.parallelism.sp == 0) return {};
                     return fmt::format("the all-to-all scatters the {} heads over sp {}; sp must divide {}",
                                        s.model.heads, s.parallelism.sp, s.model.heads);
                   }});
  rules.push_back({"sp-fits-kv-heads",
                   {"parallelism.sp", "model.kv_heads"},
                   kModelAndPlan,
                   [](const Scenario& s) -> std::optional<Breach> {
                     const int64_t sp = s.parallelism.sp;
                     const int64_t kv = s.model.kv_heads;
                     if (!head_scatter(s) || s.model.heads % sp != 0 || kv % sp == 0 || sp % kv == 0)
                       return {};
                     return fmt::format(
                         "sp {} must divide the {} K/V heads, or be a multiple of it (K/V heads are then "
                         "replicated)",
                         sp, kv);
                   }});
  rules.push_back({"fpdt-chunk-divides-sequence",
                   {"parallelism.fpdt.chunk_tokens", "model.seq_len"},
                   kModelAndPlan,
                   [](const Scenario& s) -> std::optional<Breach> {
                     if (!is(s, SequenceParallel::kFpdt) || chunk_divides_sequence(s)) return {};
                     return fmt::format(
                         "fpdt.chunk_tokens {} must divide seq_len {} (u = seq_len / chunk_tokens chunks)",
                         format_count(s.parallelism.fpdt.chunk_tokens), format_count(s.model.seq_len));
                   }});
  rules.push_back(
      {"fpdt-chunk-multiple-of-sp",
       {"parallelism.fpdt.chunk_tokens", "parallelism.sp"},
       kModelAndPlan,
       [](const Scenario& s) -> std::optional<Breach> {
         const int64_t c = s.parallelism.fpdt.chunk_tokens;
         if (!is(s, SequenceParallel::kFpdt) || !chunk_divides_sequence(s) || c % s.parallelism.sp == 0) {
           return {};
         }
         return fmt::format(
             "fpdt.chunk_tokens {} must be a multiple of sp {} (each GPU holds chunk/sp tokens of "
             "every chunk)",
             format_count(c), s.parallelism.sp);
       }});
  rules.push_back(
      {"fpdt-loss-chunks",
       {"parallelism.fpdt.chunk_tokens", "parallelism.sp"},
       kModelAndPlan,
       [](const Scenario& s) -> std::optional<Breach> {
         const int64_t c = s.parallelism.fpdt.chunk_tokens;
         const int64_t sp = s.parallelism.sp;
         if (!is(s, SequenceParallel::kFpdt) || !chunk_divides_sequence(s) || c % sp != 0 ||
             (c / sp) % kFpdtLossPieces == 0) {
           return {};
         }
         return fmt::format(
             "FPDT computes the loss in pieces of chunk_tokens / sp / {} tokens: the {} tokens per "
             "GPU of a chunk must be a multiple of {}; choose chunk_tokens a multiple of {}",
             kFpdtLossPieces, c / sp, kFpdtLossPieces, kFpdtLossPieces * sp);
       }});
  rules.push_back(
      {"fpdt-chunk-count",
       {"parallelism.fpdt.chunk_tokens", "model.seq_len"},
       kModelAndPlan,
       [](const Scenario& s) -> std::optional<Breach> {
         const int64_t c = s.parallelism.fpdt.chunk_tokens;
         if (!is(s, SequenceParallel::kFpdt) || !chunk_divides_sequence(s)) return {};
         const int64_t chunks = s.model.seq_len / c;
         if (chunks <= kMaxFpdtChunks) return {};
         return fmt::format(
             "fpdt.chunk_tokens {} cuts seq_len {} into {} chunks, above the limit of {}: every "
             "layer plays u(u+1)/2 = {} causal attention blocks, so the graphs grow with the square "
             "of the chunk count and would exhaust memory; use chunk_tokens of at least {}",
             format_count(c), format_count(s.model.seq_len), chunks, kMaxFpdtChunks,
             chunks * (chunks + 1) / 2,
             format_count((s.model.seq_len + kMaxFpdtChunks - 1) / kMaxFpdtChunks));
       }});
  rules.push_back({"fpdt-without-pipeline",
                   {"parallelism.pp", "parallelism.sequence_parallel"},
                   kParallelismSection,
                   [](const Scenario& s) -> std::optional<Breach> {
                     if (!is(s, SequenceParallel::kFpdt) || s.parallelism.pp == 1) return {};
                     return std::string(
                         "FPDT calls dist.barrier() on the world group every chunk, which deadlocks across "
                         "pipeline stages; set pp: 1");
                   }});
  rules.push_back({"fpdt-without-split-backward",
                   {"parallelism.schedule", "parallelism.sequence_parallel"},
                   kParallelismSection,
                   [](const Scenario& s) -> std::optional<Breach> {
                     if (!is(s, SequenceParallel::kFpdt) ||
                         !split_backward_schedule(s.parallelism.schedule)) {
                       return {};
                     }
                     return fmt::format(
                         "schedule {} splits each backward into input- and weight-gradient passes, which the "
                         "FPDT chunk loop does not; use 1f1b or interleaved with sequence_parallel: fpdt",
                         to_string(s.parallelism.schedule));
                   }});
  rules.push_back({"fpdt-without-latent-attention",
                   {"parallelism.sequence_parallel", "model.mla"},
                   kModelAndPlan,
                   [](const Scenario& s) -> std::optional<Breach> {
                     if (!is(s, SequenceParallel::kFpdt) || !s.model.mla.enabled()) return {};
                     return std::string(
                         "multi-head latent attention with sequence_parallel: fpdt is not modelled (the FPDT "
                         "chunk loop projects standard Q/K/V); use ulysses or ring");
                   }});
}

}  // namespace trainsim::config::internal
