// Decoding and cross-checking of scenario files.
#include <algorithm>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "sim/config/decode.h"
#include "sim/config/limits.h"
#include "sim/config/presets.h"

namespace trainsim::config {

double Scenario::usable_hbm_bytes() const {
  return cluster.hardware.gpu.hbm_capacity_bytes * (1 - training.memory_headroom);
}

bool Scenario::memory_fits(double peak_hbm_bytes, double peak_host_bytes_per_node) const {
  return peak_hbm_bytes <= usable_hbm_bytes() &&
         peak_host_bytes_per_node <= cluster.topology.node.host_memory_bytes;
}

int64_t Scenario::fpdt_chunks() const {
  if (parallelism.sequence_parallel != SequenceParallel::kFpdt) return 1;
  return model.seq_len / parallelism.fpdt.chunk_tokens;
}

namespace internal {
namespace {

// Positions of the keys the cross-field checks point at.
struct Anchors {
  Location model, training, parallelism, cluster, gpus;
  bool model_ok = false, training_ok = false, parallelism_ok = false, cluster_ok = false;
  bool dp_given = false;
};

// A model dimension (layers, hidden, heads, ...) and a parallel degree: bounded so that the
// products the checks below form cannot overflow (sim/config/limits.h says why).
constexpr IntRange kDimension{1, kMaxModelDimension};
constexpr IntRange kDegree{1, kMaxGpus};

std::vector<std::string> preset_names() {
  std::vector<std::string> names;
  for (const ModelPreset& p : model_presets()) names.emplace_back(p.name);
  return names;
}

void decode_moe(MapReader& m, Moe& out) {
  if (out.enabled()) {
    m.read("experts", out.experts, kDimension);
  } else {
    m.require("experts", out.experts, kDimension);
  }
  m.read("top_k", out.top_k, kDimension);
  m.read("expert_ffn_hidden", out.expert_ffn_hidden, kDimension);
  m.read("shared_experts", out.shared_experts, IntRange{0, kMaxModelDimension});
  m.read("capacity_factor", out.capacity_factor, RealRange{1, std::numeric_limits<double>::infinity()});
  m.read("dense_layers", out.dense_layers, IntRange{0, kMaxModelDimension});
  m.finish();
}

// Rules of the MoE section against the rest of the model.
void check_moe(MapReader& m, Model& out) {
  Moe& moe = out.moe;
  if (!moe.enabled()) return;
  if (moe.expert_ffn_hidden == 0) moe.expert_ffn_hidden = out.ffn_hidden;
  const Node node = m.child("moe");
  if (moe.top_k > moe.experts) {
    node.error(
        fmt::format("moe.top_k {} routes each token to more experts than the {} there are; use top_k <= {}",
                    moe.top_k, moe.experts, moe.experts));
  } else if (moe.capacity_factor > static_cast<double>(moe.experts) / static_cast<double>(moe.top_k)) {
    node.error(
        fmt::format("moe.capacity_factor {} exceeds experts / top_k = {}: the busiest expert cannot "
                    "receive more than every token",
                    moe.capacity_factor, static_cast<double>(moe.experts) / static_cast<double>(moe.top_k)));
  }
  if (out.layers > 0 && moe.dense_layers >= out.layers) {
    node.error(
        fmt::format("moe.dense_layers {} leaves none of the {} layers with experts; use fewer, or "
                    "remove the moe section for a dense model",
                    moe.dense_layers, out.layers));
  }
}

void decode_mla(MapReader& m, Mla& out) {
  if (out.enabled()) {
    m.read("kv_lora_rank", out.kv_lora_rank, kDimension);
  } else {
    m.require("kv_lora_rank", out.kv_lora_rank, kDimension);
  }
  m.read("q_lora_rank", out.q_lora_rank, IntRange{0, kMaxModelDimension});
  m.read("rope_head_dim", out.rope_head_dim, IntRange{0, kMaxModelDimension});
  m.read("v_head_dim", out.v_head_dim, kDimension);
  m.finish();
}

// Rules of the MLA section against the rest of the model.
void check_mla(MapReader& m, Model& out) {
  if (!out.mla.enabled()) return;
  if (out.mla.v_head_dim == 0) out.mla.v_head_dim = out.head_dim;
  const Node node = m.child("mla");
  if (out.kv_heads != out.heads) {
    node.error(
        fmt::format("multi-head latent attention projects keys and values up to every head: "
                    "kv_heads {} must equal heads {}",
                    out.kv_heads, out.heads));
  }
  if (out.linear_bias) {
    node.error(
        "multi-head latent attention is modelled without linear biases (DeepSeek's); set "
        "linear_bias: false");
  }
}

void decode_model(MapReader& m, Model& out) {
  Diagnostics& diag = *m.node().diagnostics();
  std::string preset;
  const bool preset_given = m.read("preset", preset);
  if (preset_given) {
    if (const ModelPreset* p = find_model_preset(preset)) {
      out = p->model;
    } else {
      m.child("preset").error(fmt::format("unknown model preset \"{}\"{}; presets: {}", preset,
                                          did_you_mean(preset, preset_names()),
                                          fmt::join(preset_names(), ", ")));
    }
  }
  // An unknown preset was reported above; do not pile "missing key" errors on top of it.
  const bool from_preset = preset_given;
  // With a preset every shape key is optional (it overrides the preset); without, the core shape
  // is required.
  const auto shape = [&](std::string_view key, int64_t& field) {
    if (from_preset) {
      m.read(key, field, kDimension);
    } else {
      m.require(key, field, kDimension);
    }
  };
  shape("layers", out.layers);
  shape("hidden", out.hidden);
  shape("heads", out.heads);
  shape("vocab", out.vocab);
  const bool seq_len_given = from_preset ? m.read_count("seq_len", out.seq_len, kPositive)
                                         : m.require_count("seq_len", out.seq_len, kPositive);
  if (seq_len_given && out.seq_len > kMaxSeqLenTokens) {
    m.child("seq_len").error(
        fmt::format("{} tokens is above the limit of {} ({}) tokens per sequence: attention FLOPs and "
                    "score sizes grow with its square and would overflow exact 64-bit counts; the longest "
                    "published training contexts are around 10Mi tokens",
                    out.seq_len, format_count(kMaxSeqLenTokens), kMaxSeqLenTokens));
  }
  m.read("activation", out.activation);
  m.read("norm", out.norm);
  m.read("position_embedding", out.position_embedding);
  m.read("tied_embeddings", out.tied_embeddings);
  m.read("linear_bias", out.linear_bias);
  m.read("attention", out.attention);
  const size_t errors_before = diag.count();
  const bool kv_given = m.read("kv_heads", out.kv_heads, kDimension);
  const bool head_dim_given = m.read("head_dim", out.head_dim, kDimension);
  const bool ffn_given = m.read("ffn_hidden", out.ffn_hidden, kDimension);
  if (const Node moe = m.child("moe"); moe.defined()) {
    MapReader r(moe);
    decode_moe(r, out.moe);
  }
  if (const Node mla = m.child("mla"); mla.defined()) {
    MapReader r(mla);
    decode_mla(r, out.mla);
  }
  m.finish();
  if (out.heads <= 0 || out.hidden <= 0 || diag.count() != errors_before) return;
  if (!kv_given && !from_preset) out.kv_heads = out.heads;
  if (!head_dim_given && !from_preset) {
    if (out.hidden % out.heads != 0) {
      m.node().error(fmt::format("hidden {} is not a multiple of heads {}; give head_dim explicitly",
                                 out.hidden, out.heads));
    } else {
      out.head_dim = out.hidden / out.heads;
    }
  }
  if (!ffn_given && !from_preset) {
    if (out.activation == Activation::kSwiglu) {
      m.missing("ffn_hidden");
    } else {
      out.ffn_hidden = 4 * out.hidden;
    }
  }
  if (diag.count() == errors_before) {
    check_moe(m, out);
    check_mla(m, out);
  }
  if (out.kv_heads > out.heads || out.heads % out.kv_heads != 0) {
    m.node().error(
        fmt::format("kv_heads {} must divide heads {} (grouped-query attention shares each K/V "
                    "head among heads / kv_heads query heads)",
                    out.kv_heads, out.heads));
  }
}

void decode_training(MapReader& m, Training& out) {
  m.require("global_batch", out.global_batch, IntRange{1, kMaxGlobalBatch});
  m.read("micro_batch", out.micro_batch, IntRange{1, kMaxGlobalBatch});
  m.read("dtype", out.dtype);
  m.read("optimizer", out.optimizer);
  if (Dtype grad = Dtype::kFp32; m.read("grad_dtype", grad)) {
    if (grad == Dtype::kFp32 || grad == Dtype::kBf16 || grad == Dtype::kFp16) {
      out.grad_dtype = grad;
    } else {
      m.child("grad_dtype")
          .error(fmt::format("gradients are accumulated and reduced in fp32, bf16 or fp16, not {}",
                             to_string(grad)));
    }
  }
  if (m.has("memory_headroom")) decode_percent(m.child("memory_headroom"), out.memory_headroom, 50);
  m.finish();
}

void decode_fpdt(MapReader& m, Fpdt& out) {
  m.read_count("chunk_tokens", out.chunk_tokens, kPositive);
  m.read("offload", out.offload);
  m.read("host_sync", out.host_sync);
  m.finish();
}

bool valid_order(const std::string& order) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (start <= order.size()) {
    const size_t dash = order.find('-', start);
    parts.push_back(order.substr(start, dash == std::string::npos ? std::string::npos : dash - start));
    if (dash == std::string::npos) break;
    start = dash + 1;
  }
  std::sort(parts.begin(), parts.end());
  return parts == std::vector<std::string>{"dp", "pp", "sp", "tp"};
}

void decode_parallelism(MapReader& m, Parallelism& out, Anchors& anchors) {
  m.read("tp", out.tp, kDegree);
  m.read("pp", out.pp, kDegree);
  anchors.dp_given = m.read("dp", out.dp, kDegree);
  m.read("sp", out.sp, kDegree);
  const bool vpp_given = m.read("vpp", out.vpp, kDegree);
  m.read("ep", out.ep, kDegree);
  m.read("expert_tp", out.expert_tp, kDegree);
  out.schedule = out.vpp > 1 ? Schedule::kInterleaved : Schedule::kOneFOneB;
  m.read("schedule", out.schedule);
  if (v_shaped_schedule(out.schedule) && !vpp_given) out.vpp = 2;
  m.read("sequence_parallel", out.sequence_parallel);
  if (m.read("cp_comm", out.cp_comm) && out.sequence_parallel != SequenceParallel::kRing) {
    m.child("cp_comm").error(
        "cp_comm is only used with sequence_parallel: ring (Megatron context parallelism); remove it or set "
        "it");
  }
  const Node fpdt = m.child("fpdt");
  if (fpdt.defined()) {
    if (out.sequence_parallel != SequenceParallel::kFpdt) {
      fpdt.error("fpdt settings are only used with sequence_parallel: fpdt; remove them or set it");
    }
    MapReader f(fpdt);
    decode_fpdt(f, out.fpdt);
  }
  m.read("zero_stage", out.zero_stage, IntRange{0, 3});
  m.read("recompute", out.recompute);
  m.read("cpu_checkpointing", out.cpu_checkpointing);
  if (m.read("order", out.order) && !valid_order(out.order)) {
    m.child("order").error(
        fmt::format("\"{}\" is not an order of tp, sp, dp and pp (innermost first), "
                    "e.g. tp-sp-dp-pp",
                    out.order));
  }
  m.read("dp_bucket", out.dp_bucket_bytes, QuantityKind::kBytes, kPositiveReal);
  m.read("overlap_grad_reduce", out.overlap_grad_reduce);
  m.read("reshard_after_forward", out.reshard_after_forward);
  m.read("tp_comm_overlap", out.tp_comm_overlap);
  m.read("async_tp_reduce", out.async_tp_reduce);
  m.read("uneven_stages", out.uneven_stages);
  m.read("first_stage_layers", out.first_stage_layers, kDimension);
  m.read("last_stage_layers", out.last_stage_layers, kDimension);
  m.finish();
}

// Expert parallelism against the model and the rest of the plan.
template <class Report>
void check_experts(const Model& m, const Parallelism& p, bool dp_known, const Report& plan_error) {
  if (!m.moe.enabled()) {
    if (p.ep > 1 || p.expert_tp > 0) {
      plan_error(
          fmt::format("{} spreads experts, but the model has none; add a model.moe section or "
                      "remove it",
                      p.ep > 1 ? fmt::format("ep {}", p.ep) : fmt::format("expert_tp {}", p.expert_tp)));
    }
    return;
  }
  const int64_t etp = p.expert_tp_degree();
  const int64_t fold = p.tp / etp;  // tensor-parallel ranks folded into the expert groups
  if (p.tp % etp != 0) {
    plan_error(
        fmt::format("expert_tp {} must divide tp {}; choose it among the divisors of {}", etp, p.tp, p.tp));
  } else if (fold % p.ep != 0 && p.ep % fold != 0) {
    plan_error(
        fmt::format("ep {} must divide tp / expert_tp = {} or be a multiple of it (expert groups "
                    "take the folded tensor-parallel ranks first, then data-parallel ones)",
                    p.ep, fold));
  } else if (dp_known && (fold * p.dp) % p.ep != 0) {
    plan_error(fold == 1
                   ? fmt::format("ep {} must divide dp {} (expert parallelism spreads the experts over "
                                 "data-parallel ranks); choose ep among the divisors of {}",
                                 p.ep, p.dp, p.dp)
                   : fmt::format("ep {} must divide (tp / expert_tp) x dp = {} x {} (expert groups take "
                                 "the folded tensor-parallel ranks, then data-parallel ones); choose "
                                 "ep among the divisors of {}",
                                 p.ep, fold, p.dp, fold * p.dp));
  } else if (m.moe.experts % p.ep != 0) {
    plan_error(fmt::format("ep {} must divide the {} experts of each MoE layer", p.ep, m.moe.experts));
  } else if (m.moe.expert_ffn_hidden % etp != 0) {
    plan_error(
        fmt::format("expert_tp {} must divide moe.expert_ffn_hidden {}", etp, m.moe.expert_ffn_hidden));
  }
  if (p.tp > 1 && p.sequence_parallel != SequenceParallel::kMegatron &&
      p.sequence_parallel != SequenceParallel::kRing) {
    plan_error(
        fmt::format("a mixture of experts with tp {} needs sequence_parallel: megatron (Megatron-LM "
                    "requires it: the token dispatcher works on sequence-sharded tokens)",
                    p.tp));
  }
  if (p.sequence_parallel == SequenceParallel::kFpdt) {
    plan_error(
        "a mixture of experts with sequence_parallel: fpdt is not modelled (FPDT chunks a dense "
        "MLP); use ulysses or ring");
  }
  if (p.zero_stage == 3) {
    plan_error(
        "a mixture of experts with zero_stage 3 is not modelled; use zero_stage 0, 1 or 2 "
        "(expert states are sharded over their expert-data-parallel group)");
  }
}

// Cross-field rules of the parallel plan against the model, batch and cluster. Every message says
// what to change.
void check_plan(const Scenario& s, const Anchors& a, Diagnostics& d) {
  const Model& m = s.model;
  const Parallelism& p = s.parallelism;
  const Training& t = s.training;
  const auto plan_error = [&](std::string message) {
    d.error(a.parallelism, "parallelism", std::move(message));
  };

  if (a.parallelism_ok && p.tp_comm_overlap && p.tp > 1 &&
      p.sequence_parallel != SequenceParallel::kMegatron && p.sequence_parallel != SequenceParallel::kRing) {
    plan_error(fmt::format(
        "tp_comm_overlap with tp {} needs sequence_parallel: megatron (Transformer Engine overlaps the "
        "all-gathers and reduce-scatters of sequence parallelism with the GEMMs, not all-reduces)",
        p.tp));
  }
  if (a.model_ok && a.parallelism_ok) {
    if (m.heads % p.tp != 0) {
      plan_error(fmt::format("tp {} must divide the {} attention heads; choose tp among the divisors of {}",
                             p.tp, m.heads, m.heads));
    } else if (m.kv_heads % p.tp != 0) {
      plan_error(
          fmt::format("tp {} must divide the {} key/value heads (Megatron splits K/V heads across "
                      "tensor-parallel ranks); use tp <= {}",
                      p.tp, m.kv_heads, m.kv_heads));
    }
    const bool stage_layers = p.first_stage_layers > 0 || p.last_stage_layers > 0;
    if (stage_layers) {
      // The stages between the first and the last share the remaining layers evenly.
      const int64_t middle_stages =
          p.pp - (p.first_stage_layers > 0 ? 1 : 0) - (p.last_stage_layers > 0 ? 1 : 0);
      const int64_t middle_layers = m.layers - p.first_stage_layers - p.last_stage_layers;
      if (p.pp == 1 || p.vpp > 1 || p.uneven_stages) {
        plan_error(
            "first_stage_layers and last_stage_layers set the layers of the first and last of pp > 1 stages "
            "without virtual stages (vpp 1) and without uneven_stages; remove them or change the plan");
      } else if (middle_stages == 0 ? middle_layers != 0
                                    : middle_layers < middle_stages || middle_layers % middle_stages != 0) {
        std::vector<std::string> given;
        if (p.first_stage_layers > 0)
          given.push_back(fmt::format("first_stage_layers {}", p.first_stage_layers));
        if (p.last_stage_layers > 0)
          given.push_back(fmt::format("last_stage_layers {}", p.last_stage_layers));
        plan_error(fmt::format(
            "{} layers less {} leave {} for the other {} stages, which must share them evenly (at least one "
            "each); change {}",
            m.layers, fmt::join(given, " and "), middle_layers, middle_stages, fmt::join(given, " or ")));
      }
    } else if (m.layers < p.pp * p.vpp) {
      plan_error(fmt::format("pp·vpp = {}·{} = {} model chunks but only {} layers; lower pp or vpp", p.pp,
                             p.vpp, p.pp * p.vpp, m.layers));
    } else if (m.layers % (p.pp * p.vpp) != 0 && !p.uneven_stages) {
      plan_error(
          fmt::format("pp·vpp = {}·{} = {} must divide the {} layers; change pp or vpp, or set "
                      "uneven_stages: true to give some stages one layer less",
                      p.pp, p.vpp, p.pp * p.vpp, m.layers));
    }
    if ((p.sequence_parallel == SequenceParallel::kRing || p.sequence_parallel == SequenceParallel::kFpdt) &&
        s.attention_kernel() == AttentionKernel::kUnfused) {
      plan_error(fmt::format(
          "sequence_parallel: {} needs a fused attention kernel (FPDT calls flash-attn's forward and "
          "backward per chunk; ring attention merges the per-block outputs by their log-sum-exp, which "
          "only a fused kernel returns), but model.attention is unfused{}; set model.attention: fused",
          to_string(p.sequence_parallel),
          m.attention == AttentionKernel::kAuto
              ? fmt::format(" (auto: a model with learned positions under framework {})",
                            to_string(s.framework))
              : ""));
    }
    const bool sp_kind = p.sequence_parallel == SequenceParallel::kUlysses ||
                         p.sequence_parallel == SequenceParallel::kRing ||
                         p.sequence_parallel == SequenceParallel::kFpdt;
    if (!sp_kind && p.sp != 1) {
      plan_error(
          fmt::format("sp {} needs sequence_parallel ulysses, ring or fpdt (megatron sequence "
                      "parallelism reuses the tp group); set sp: 1 or choose one of those",
                      p.sp));
    }
    if (p.sequence_parallel == SequenceParallel::kMegatron && m.seq_len % p.tp != 0) {
      plan_error(
          fmt::format("megatron sequence parallelism splits the {} tokens over tp {}; seq_len must be a "
                      "multiple of tp",
                      m.seq_len, p.tp));
    }
    if (sp_kind && m.seq_len % p.sp != 0) {
      plan_error(fmt::format("seq_len {} must be a multiple of sp {}", m.seq_len, p.sp));
    }
    if ((p.sequence_parallel == SequenceParallel::kUlysses ||
         p.sequence_parallel == SequenceParallel::kFpdt) &&
        m.heads % p.tp == 0) {
      const int64_t local_heads = m.heads / p.tp;
      const int64_t local_kv = std::max<int64_t>(1, m.kv_heads / p.tp);
      if (local_heads % p.sp != 0) {
        plan_error(
            fmt::format("the all-to-all scatters the {} heads per tp rank over sp {}; sp must divide {}",
                        local_heads, p.sp, local_heads));
      } else if (local_kv % p.sp != 0 && p.sp % local_kv != 0) {
        plan_error(
            fmt::format("sp {} must divide the {} K/V heads per tp rank, or be a multiple of it (K/V "
                        "heads are then replicated)",
                        p.sp, local_kv));
      }
    }
    if (p.sequence_parallel == SequenceParallel::kFpdt) {
      const int64_t c = p.fpdt.chunk_tokens;
      if (c > m.seq_len || m.seq_len % c != 0) {
        plan_error(
            fmt::format("fpdt.chunk_tokens {} must divide seq_len {} (u = seq_len / chunk_tokens chunks)",
                        format_count(c), format_count(m.seq_len)));
      } else if (c % p.sp != 0) {
        plan_error(
            fmt::format("fpdt.chunk_tokens {} must be a multiple of sp {} (each GPU holds chunk/sp "
                        "tokens of every chunk)",
                        format_count(c), p.sp));
      }
      const int64_t chunks = m.seq_len / c;
      if (chunks > kMaxFpdtChunks) {
        plan_error(fmt::format(
            "fpdt.chunk_tokens {} cuts seq_len {} into {} chunks, above the limit of {}: every layer plays "
            "u(u+1)/2 = {} causal attention blocks, so the graphs grow with the square of the chunk count "
            "and would exhaust memory; use chunk_tokens of at least {}",
            format_count(c), format_count(m.seq_len), chunks, kMaxFpdtChunks, chunks * (chunks + 1) / 2,
            format_count((m.seq_len + kMaxFpdtChunks - 1) / kMaxFpdtChunks)));
      }
    }
    if (p.schedule == Schedule::kInterleaved && p.vpp == 1) {
      plan_error("schedule interleaved needs vpp > 1 model chunks per stage; set vpp or use 1f1b");
    } else if (!chunked_schedule(p.schedule) && p.vpp > 1) {
      plan_error(fmt::format(
          "vpp {} only makes sense with schedule: interleaved, zero-bubble, zb-v or dualpipev", p.vpp));
    } else if (v_shaped_schedule(p.schedule) && p.vpp != 2) {
      plan_error(fmt::format("schedule {} places 2 model chunks per stage in a V; set vpp: 2 (got {})",
                             to_string(p.schedule), p.vpp));
    }
    if (const std::string zero = s.zero_plan_error(); !zero.empty()) plan_error(zero);
    if (p.schedule != Schedule::kGpipe && p.schedule != Schedule::kOneFOneB && p.pp == 1) {
      plan_error(fmt::format("schedule {} needs pp > 1", to_string(p.schedule)));
    }
    check_experts(m, p, a.cluster_ok || a.dp_given, plan_error);
    if (m.mla.enabled() && p.sequence_parallel == SequenceParallel::kFpdt) {
      plan_error(
          "multi-head latent attention with sequence_parallel: fpdt is not modelled (the FPDT chunk "
          "loop projects standard Q/K/V); use ulysses or ring");
    }
    if (split_backward_schedule(p.schedule) && p.sequence_parallel == SequenceParallel::kFpdt) {
      plan_error(
          fmt::format("schedule {} splits each backward into input- and weight-gradient passes, which the "
                      "FPDT chunk loop does not; use 1f1b or interleaved with sequence_parallel: fpdt",
                      to_string(p.schedule)));
    }
  }
  if (a.parallelism_ok && a.cluster_ok) {
    const int64_t model_parallel = p.tp * p.pp * p.sp;  // at most kMaxGpus^3 = 2^60
    int64_t world = 0;
    if (__builtin_mul_overflow(model_parallel, p.dp, &world)) world = std::numeric_limits<int64_t>::max();
    if (!a.dp_given) {
      // dp was derived by the caller; nothing to check beyond divisibility, reported there.
    } else if (world != s.cluster.gpus) {
      d.error(a.parallelism, "parallelism",
              fmt::format("tp·pp·dp·sp = {}·{}·{}·{} = {} GPUs but cluster.gpus is {}; change dp to {} or "
                          "cluster.gpus to {}",
                          p.tp, p.pp, p.dp, p.sp, world, s.cluster.gpus,
                          s.cluster.gpus % model_parallel == 0
                              ? fmt::format("{}", s.cluster.gpus / model_parallel)
                              : std::string("a value that fits"),
                          world));
    }
  }
  if (a.training_ok && a.parallelism_ok && a.cluster_ok) {
    const int64_t per_step = t.micro_batch * p.dp;
    if (t.global_batch % per_step != 0) {
      d.error(a.training, "training",
              fmt::format("global_batch {} must be a multiple of micro_batch·dp = {}·{} = {}", t.global_batch,
                          t.micro_batch, p.dp, per_step));
    } else if (micro_batches_multiple_of_pp(p.schedule, p.vpp) && (t.global_batch / per_step) % p.pp != 0) {
      d.error(a.training, "training",
              fmt::format("the {} schedule with vpp {} needs the {} micro-batches per replica to be a "
                          "multiple of pp {} (Megatron's rule); change global_batch or micro_batch",
                          to_string(p.schedule), p.vpp, t.global_batch / per_step, p.pp));
    } else if (p.schedule == Schedule::kDualPipeV && t.global_batch / per_step < 2 * p.pp) {
      d.error(
          a.training, "training",
          fmt::format("the dualpipev schedule needs at least 2·pp = {} micro-batches per replica (DeepSeek's "
                      "rule), got {}; raise global_batch or lower micro_batch",
                      2 * p.pp, t.global_batch / per_step));
    }
  }
  if (a.training_ok && a.cluster_ok) {
    // fp8 training runs attention and the LM head in bf16 (storage_dtype).
    for (const Dtype needed : {t.dtype, storage_dtype(t.dtype)}) {
      if (s.cluster.hardware.peak_flops_per_s(needed)) continue;
      d.error(a.training, "training.dtype",
              fmt::format("the hardware profile {} has no peak FLOP rate for {}; choose another dtype or add "
                          "gpu.peak_flops.{} to the profile",
                          s.cluster.hardware.name, to_string(needed), to_string(needed)));
      break;
    }
  }
}

}  // namespace

void decode_scenario(const Node& root, Scenario& out, const TopologyLoader& load_topology,
                     const HardwareLoader& load_hardware) {
  Diagnostics& d = *root.diagnostics();
  MapReader r(root);
  r.child("schema_version");
  r.child("extends");
  Anchors a;
  r.require("name", out.name);
  r.read("description", out.description);
  r.read("framework", out.framework);

  const auto section = [&](std::string_view key, Location& where, bool& ok, const auto& decode) {
    const Node node = r.child(key);
    where = node.location();
    if (!node.defined()) {
      r.missing(key);
      return;
    }
    const size_t before = d.count();
    MapReader m(node);
    decode(m);
    ok = d.count() == before;
  };
  section("model", a.model, a.model_ok, [&](MapReader& m) { decode_model(m, out.model); });
  section("training", a.training, a.training_ok, [&](MapReader& m) { decode_training(m, out.training); });
  const Node parallelism = r.child("parallelism");
  a.parallelism = parallelism.location();
  {
    const size_t before = d.count();
    MapReader m(parallelism);  // the whole section is optional: defaults are a single GPU
    decode_parallelism(m, out.parallelism, a);
    a.parallelism_ok = d.count() == before;
  }
  section("cluster", a.cluster, a.cluster_ok, [&](MapReader& m) {
    const Node topology = m.child("topology");
    const Node hardware = m.child("hardware");
    const Node topology_set = m.child("topology_set");  // what-ifs over the files (what_if.h)
    const Node hardware_set = m.child("hardware_set");
    bool loaded = true;
    if (!topology.defined()) {
      m.missing("topology");
      loaded = false;
    } else if (decode(topology, out.cluster.topology_path)) {
      loaded &= load_topology(topology, topology_set, out.cluster.topology_path, out.cluster.topology);
    } else {
      loaded = false;
    }
    if (!hardware.defined()) {
      m.missing("hardware");
      loaded = false;
    } else if (decode(hardware, out.cluster.hardware_path)) {
      loaded &= load_hardware(hardware, hardware_set, out.cluster.hardware_path, out.cluster.hardware);
    } else {
      loaded = false;
    }
    if (const Node cost = m.child("cost"); cost.defined()) {
      MapReader c(cost);
      Cost price;
      decode_cost(c, price);
      out.cluster.price_per_gpu_hour_usd = price.price_per_gpu_hour_usd;
      if (loaded && price.price_per_gpu_hour_usd) out.cluster.hardware.cost = price;
    }
    if (const Node facility = m.child("facility"); facility.defined()) {
      MapReader f(facility);
      f.read("pue", out.cluster.facility.pue, RealRange{1, 10});
      double price = 0;
      const Node electricity = f.child("electricity_price");
      if (electricity.defined() && decode_usd(electricity, "USD/kWh", "0.08USD/kWh", price)) {
        out.cluster.facility.electricity_usd_per_kwh = price;
      }
      f.finish();
    }
    const Node gpus = m.child("gpus");
    a.gpus = gpus.location();
    if (gpus.defined()) {
      if (decode(gpus, out.cluster.gpus, kPositive) && out.cluster.gpus > kMaxGpus) {
        gpus.error(fmt::format(
            "{} GPUs is above the limit of {}: the platform holds every GPU, NIC, switch and link, and "
            "larger clusters would exhaust the host's memory; simulate a smaller cluster",
            out.cluster.gpus, kMaxGpus));
        loaded = false;
      }
    } else if (loaded) {
      out.cluster.gpus = out.cluster.topology.total_gpus();
    }
    m.finish();
    if (loaded && out.cluster.gpus > out.cluster.topology.total_gpus()) {
      gpus.error(
          fmt::format("{} GPUs requested but topology {} has {} ({} nodes of {}); use a larger topology "
                      "or fewer GPUs",
                      out.cluster.gpus, out.cluster.topology.name, out.cluster.topology.total_gpus(),
                      out.cluster.topology.fabric.nodes, out.cluster.topology.node.gpus));
    }
  });
  if (const Node stragglers = r.child("stragglers"); stragglers.defined()) {
    MapReader m(stragglers);
    decode_stragglers(m, out.stragglers, a.cluster_ok ? &out.cluster : nullptr);
  }
  if (const Node campaign = r.child("campaign"); campaign.defined()) {
    MapReader m(campaign);
    decode_campaign(m, out.campaign);
  }
  r.finish();

  Parallelism& p = out.parallelism;
  if (a.parallelism_ok && a.cluster_ok && !a.dp_given) {
    const int64_t model_parallel = p.tp * p.pp * p.sp;
    if (out.cluster.gpus % model_parallel != 0) {
      d.error(
          a.parallelism, "parallelism",
          fmt::format("tp·pp·sp = {}·{}·{} = {} does not divide cluster.gpus {}, so dp cannot be derived; "
                      "change the degrees or cluster.gpus",
                      p.tp, p.pp, p.sp, model_parallel, out.cluster.gpus));
      a.parallelism_ok = false;
    } else {
      p.dp = out.cluster.gpus / model_parallel;
    }
  }
  check_plan(out, a, d);
  out.model.attention = out.attention_kernel();
}

}  // namespace internal
}  // namespace trainsim::config
