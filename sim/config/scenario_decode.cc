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
#include "sim/config/plan_rules.h"
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

// Which sections decoded cleanly, for the plan rules (plan_rules.h), and where parallelism is.
struct Anchors {
  Location parallelism;
  bool model_ok = false, training_ok = false, parallelism_ok = false, cluster_ok = false;
  bool stragglers_ok = true;
  bool dp_given = false;

  unsigned decoded() const {
    return (model_ok ? kModelSection : 0u) | (training_ok ? kTrainingSection : 0u) |
           (parallelism_ok ? kParallelismSection : 0u) | (cluster_ok ? kClusterGpus | kClusterFiles : 0u) |
           (stragglers_ok ? kStragglersSection : 0u);
  }
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
  if (m.read("fp8_params", out.fp8_params) && out.fp8_params && out.dtype != Dtype::kFp8) {
    m.child("fp8_params")
        .error(fmt::format("FP8 weights need FP8 training: set training.dtype to fp8, or fp8_params to "
                           "false (training.dtype is {})",
                           to_string(out.dtype)));
  }
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
  m.read("overlap_p2p_comm", out.overlap_p2p_comm);
  m.read("moe_host_sync", out.moe_host_sync);
  m.read("micro_batch_sync", out.micro_batch_sync);
  m.read("reshard_after_forward", out.reshard_after_forward);
  m.read("zero3_gather_bucket", out.zero3_gather_bucket_bytes, QuantityKind::kBytes, kPositiveReal);
  if (int64_t threshold = 0; m.read_count("zero3_persistence_threshold", threshold, kNonNegative)) {
    out.zero3_persistence_threshold = threshold;
  }
  m.read("tp_comm_overlap", out.tp_comm_overlap);
  m.read("async_tp_reduce", out.async_tp_reduce);
  m.read("ep_comm_overlap", out.ep_comm_overlap);
  m.read("uneven_stages", out.uneven_stages);
  m.read("first_stage_layers", out.first_stage_layers, kDimension);
  m.read("last_stage_layers", out.last_stage_layers, kDimension);
  m.finish();
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

  const auto section = [&](std::string_view key, bool& ok, const auto& decode) {
    const Node node = r.child(key);
    if (!node.defined()) {
      r.missing(key);
      return;
    }
    const size_t before = d.count();
    MapReader m(node);
    decode(m);
    ok = d.count() == before;
  };
  section("model", a.model_ok, [&](MapReader& m) { decode_model(m, out.model); });
  section("training", a.training_ok, [&](MapReader& m) { decode_training(m, out.training); });
  const Node parallelism = r.child("parallelism");
  a.parallelism = parallelism.location();
  {
    const size_t before = d.count();
    MapReader m(parallelism);  // the whole section is optional: defaults are a single GPU
    decode_parallelism(m, out.parallelism, a);
    a.parallelism_ok = d.count() == before;
  }
  section("cluster", a.cluster_ok, [&](MapReader& m) {
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
    if (gpus.defined()) {
      if (decode(gpus, out.cluster.gpus, kPositive) && out.cluster.gpus > kMaxGpus) {
        gpus.error(fmt::format(
            "{} GPUs is above the limit of {}: the platform holds every GPU, NIC, switch and link, and "
            "larger clusters would exhaust the host's memory; simulate a smaller cluster",
            out.cluster.gpus, kMaxGpus));
      }
    } else if (loaded) {
      out.cluster.gpus = out.cluster.topology.total_gpus();
    }
    m.finish();
  });
  if (const Node stragglers = r.child("stragglers"); stragglers.defined()) {
    const size_t before = d.count();
    MapReader m(stragglers);
    decode_stragglers(m, out.stragglers, a.cluster_ok ? &out.cluster : nullptr);
    a.stragglers_ok = d.count() == before;
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
  for (const PlanViolation& broken : plan_violations(out, a.decoded())) {
    d.error(root.find(broken.key).location(), broken.key, broken.message);
  }
  out.model.attention = out.attention_kernel();
}

}  // namespace internal
}  // namespace trainsim::config
