#include "sim/config/emit.h"

#include <cmath>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "sim/config/units.h"

namespace trainsim::config {
namespace {

template <class E>
void key_enum(YAML::Emitter& out, const char* key, E value) {
  out << YAML::Key << key << YAML::Value << std::string(to_string(value));
}

void emit_model(YAML::Emitter& out, const Model& m) {
  out << YAML::Key << "model" << YAML::Value << YAML::BeginMap;
  if (!m.preset.empty()) out << YAML::Key << "preset" << YAML::Value << m.preset;
  out << YAML::Key << "layers" << YAML::Value << m.layers;
  out << YAML::Key << "hidden" << YAML::Value << m.hidden;
  out << YAML::Key << "heads" << YAML::Value << m.heads;
  out << YAML::Key << "kv_heads" << YAML::Value << m.kv_heads;
  out << YAML::Key << "head_dim" << YAML::Value << m.head_dim;
  out << YAML::Key << "ffn_hidden" << YAML::Value << m.ffn_hidden;
  out << YAML::Key << "vocab" << YAML::Value << m.vocab;
  out << YAML::Key << "seq_len" << YAML::Value << format_count(m.seq_len);
  key_enum(out, "activation", m.activation);
  key_enum(out, "norm", m.norm);
  key_enum(out, "position_embedding", m.position_embedding);
  out << YAML::Key << "tied_embeddings" << YAML::Value << m.tied_embeddings;
  out << YAML::Key << "linear_bias" << YAML::Value << m.linear_bias;
  key_enum(out, "attention", m.attention);
  if (m.moe.enabled()) {
    out << YAML::Key << "moe" << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "experts" << YAML::Value << m.moe.experts;
    out << YAML::Key << "top_k" << YAML::Value << m.moe.top_k;
    out << YAML::Key << "expert_ffn_hidden" << YAML::Value << m.moe.expert_ffn_hidden;
    out << YAML::Key << "shared_experts" << YAML::Value << m.moe.shared_experts;
    out << YAML::Key << "capacity_factor" << YAML::Value << m.moe.capacity_factor;
    out << YAML::Key << "dense_layers" << YAML::Value << m.moe.dense_layers;
    out << YAML::EndMap;
  }
  if (m.mla.enabled()) {
    out << YAML::Key << "mla" << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "kv_lora_rank" << YAML::Value << m.mla.kv_lora_rank;
    out << YAML::Key << "q_lora_rank" << YAML::Value << m.mla.q_lora_rank;
    out << YAML::Key << "rope_head_dim" << YAML::Value << m.mla.rope_head_dim;
    out << YAML::Key << "v_head_dim" << YAML::Value << m.mla.v_head_dim;
    out << YAML::EndMap;
  }
  out << YAML::EndMap;
}

// A key the framework supplies unless the scenario sets it: the key when set (or in Defaults::kWritten);
// otherwise, in Defaults::kResolved, a comment with the framework's value, so that the output loads back to
// the same scenario and a changed plan loaded from it still takes the framework's default.
void framework_key(YAML::Emitter& out, const Scenario& s, Defaults defaults, const char* key, bool given,
                   const std::string& value) {
  if (given || defaults == Defaults::kWritten) {
    out << YAML::Key << key << YAML::Value << value;
  } else if (defaults == Defaults::kResolved) {
    out << YAML::Newline
        << YAML::Comment(fmt::format("{}: {} ({} default)", key, value, to_string(s.framework)));
  }
}

// yaml-cpp writes a comment on its own line at column 0; indent each like the line after it.
std::string indent_comments(const std::string& yaml) {
  std::vector<std::string> lines;
  std::istringstream in(yaml);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  for (size_t i = lines.size(); i-- > 1;) {  // from the end, so a comment follows indented lines
    if (lines[i - 1].rfind("# ", 0) == 0) lines[i - 1].insert(0, lines[i].find_first_not_of(' '), ' ');
  }
  std::string out;
  for (const std::string& line : lines) out += line + "\n";
  return out;
}

void emit_parallelism(YAML::Emitter& out, const Scenario& s, Defaults defaults) {
  const Parallelism& p = s.parallelism;
  out << YAML::Key << "parallelism" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "tp" << YAML::Value << p.tp;
  out << YAML::Key << "pp" << YAML::Value << p.pp;
  out << YAML::Key << "dp" << YAML::Value << p.dp;
  out << YAML::Key << "sp" << YAML::Value << p.sp;
  out << YAML::Key << "vpp" << YAML::Value << p.vpp;
  out << YAML::Key << "ep" << YAML::Value << p.ep;
  if (p.expert_tp > 0) out << YAML::Key << "expert_tp" << YAML::Value << p.expert_tp;
  key_enum(out, "schedule", p.schedule);
  key_enum(out, "sequence_parallel", p.sequence_parallel);
  if (p.sequence_parallel == SequenceParallel::kRing) key_enum(out, "cp_comm", p.cp_comm);
  if (p.sequence_parallel == SequenceParallel::kFpdt) {
    out << YAML::Key << "fpdt" << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "chunk_tokens" << YAML::Value << format_count(p.fpdt.chunk_tokens);
    out << YAML::Key << "offload" << YAML::Value << p.fpdt.offload;
    out << YAML::Key << "host_sync" << YAML::Value << p.fpdt.host_sync;
    out << YAML::EndMap;
  }
  out << YAML::Key << "zero_stage" << YAML::Value << p.zero_stage;
  key_enum(out, "recompute", p.recompute);
  out << YAML::Key << "cpu_checkpointing" << YAML::Value << p.cpu_checkpointing;
  out << YAML::Key << "order" << YAML::Value << p.order;
  framework_key(out, s, defaults, "dp_bucket", p.dp_bucket_bytes.has_value(),
                std::isinf(s.dp_bucket_bytes()) ? std::string("one per model chunk")
                                                : format_quantity(s.dp_bucket_bytes(), QuantityKind::kBytes));
  framework_key(out, s, defaults, "overlap_grad_reduce", p.overlap_grad_reduce.has_value(),
                s.overlap_grad_reduce() ? "true" : "false");
  if (p.schedule == Schedule::kInterleaved) {
    framework_key(out, s, defaults, "overlap_p2p_comm", p.overlap_p2p_comm.has_value(),
                  s.overlap_p2p_comm() ? "true" : "false");
  }
  framework_key(out, s, defaults, "micro_batch_sync", p.micro_batch_sync.has_value(),
                s.micro_batch_sync() ? "true" : "false");
  if (s.model.moe.enabled()) {
    framework_key(out, s, defaults, "moe_host_sync", p.moe_host_sync.has_value(),
                  s.moe_host_sync() ? "true" : "false");
  }
  if (p.zero_stage == 3) {
    framework_key(out, s, defaults, "reshard_after_forward", p.reshard_after_forward.has_value(),
                  s.reshard_after_forward() ? "true" : "false");
    framework_key(out, s, defaults, "zero3_gather_bucket", p.zero3_gather_bucket_bytes.has_value(),
                  std::isinf(s.zero3_gather_bucket_bytes())
                      ? std::string("one per unit")
                      : format_quantity(s.zero3_gather_bucket_bytes(), QuantityKind::kBytes));
    framework_key(out, s, defaults, "zero3_persistence_threshold", p.zero3_persistence_threshold.has_value(),
                  format_count(s.zero3_persistence_threshold()));
  }
  out << YAML::Key << "tp_comm_overlap" << YAML::Value << p.tp_comm_overlap;
  if (p.tp > 1) out << YAML::Key << "async_tp_reduce" << YAML::Value << p.async_tp_reduce;
  if (p.ep > 1) out << YAML::Key << "ep_comm_overlap" << YAML::Value << p.ep_comm_overlap;
  out << YAML::Key << "uneven_stages" << YAML::Value << p.uneven_stages;
  if (p.first_stage_layers > 0)
    out << YAML::Key << "first_stage_layers" << YAML::Value << p.first_stage_layers;
  if (p.last_stage_layers > 0) out << YAML::Key << "last_stage_layers" << YAML::Value << p.last_stage_layers;
  out << YAML::EndMap;
}

void emit_stragglers(YAML::Emitter& out, const Stragglers& s) {
  out << YAML::Key << "stragglers" << YAML::Value << YAML::BeginMap;
  if (!s.slow_gpus.empty()) {
    out << YAML::Key << "slow_gpus" << YAML::Value << YAML::BeginSeq;
    for (const SlowGpus& e : s.slow_gpus) {
      out << YAML::Flow << YAML::BeginMap;
      if (!e.ranks.empty()) out << YAML::Key << "ranks" << YAML::Value << YAML::Flow << e.ranks;
      if (!e.nodes.empty()) out << YAML::Key << "nodes" << YAML::Value << YAML::Flow << e.nodes;
      out << YAML::Key << "speed" << YAML::Value << e.speed;
      out << YAML::EndMap;
    }
    out << YAML::EndSeq;
  }
  if (!s.slow_nics.empty()) {
    out << YAML::Key << "slow_nics" << YAML::Value << YAML::BeginSeq;
    for (const SlowNics& e : s.slow_nics) {
      out << YAML::Flow << YAML::BeginMap;
      out << YAML::Key << "nodes" << YAML::Value << YAML::Flow << e.nodes;
      out << YAML::Key << "bandwidth" << YAML::Value
          << format_quantity(e.bandwidth_bytes_per_s, QuantityKind::kBandwidth);
      out << YAML::EndMap;
    }
    out << YAML::EndSeq;
  }
  if (s.spread_stddev > 0) {
    out << YAML::Key << "speed_spread" << YAML::Value << YAML::Flow << YAML::BeginMap;
    out << YAML::Key << "stddev" << YAML::Value << s.spread_stddev;
    out << YAML::Key << "seed" << YAML::Value << s.seed;
    out << YAML::EndMap;
  }
  out << YAML::EndMap;
}

void emit_campaign(YAML::Emitter& out, const Campaign& c) {
  out << YAML::Key << "campaign" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "tokens" << YAML::Value << format_token_total(c.tokens);
  if (c.checkpoints) {
    const Checkpoints& k = *c.checkpoints;
    out << YAML::Key << "checkpoints" << YAML::Value << YAML::Flow << YAML::BeginMap;
    out << YAML::Key << "write_bandwidth" << YAML::Value
        << format_quantity(k.write_bandwidth_bytes_per_s, QuantityKind::kBandwidth);
    out << YAML::Key << "async" << YAML::Value << k.async;
    out << YAML::Key << "interval" << YAML::Value
        << (k.interval_s > 0 ? format_quantity(k.interval_s, QuantityKind::kDuration) : "auto");
    out << YAML::EndMap;
  }
  if (c.interruptions) {
    out << YAML::Key << "interruptions" << YAML::Value << YAML::Flow << YAML::BeginMap;
    out << YAML::Key << "mtbi_per_gpu" << YAML::Value
        << format_quantity(c.interruptions->mtbi_per_gpu_s, QuantityKind::kDuration);
    out << YAML::Key << "restart" << YAML::Value
        << format_quantity(c.interruptions->restart_s, QuantityKind::kDuration);
    out << YAML::EndMap;
  }
  out << YAML::EndMap;
}

// What-if values (what_if.h) as the nested map a scenario writes under `key`.
void emit_what_if(YAML::Emitter& out, const char* key, const std::vector<WhatIf>& what_if) {
  if (what_if.empty()) return;
  struct Branch {
    std::map<std::string, Branch> children;
    const WhatIf* leaf = nullptr;
  };
  Branch root;
  for (const WhatIf& w : what_if) {
    Branch* at = &root;
    for (size_t start = 0, dot = 0; dot != std::string::npos; start = dot + 1) {
      dot = w.key.find('.', start);
      at = &at->children[w.key.substr(start, dot == std::string::npos ? dot : dot - start)];
    }
    at->leaf = &w;
  }
  const auto emit = [&out](const Branch& branch, const auto& self) -> void {
    out << YAML::BeginMap;
    for (const auto& [name, child] : branch.children) {
      out << YAML::Key << name << YAML::Value;
      if (child.leaf != nullptr) {
        out << YAML::Load(child.leaf->value);
      } else {
        self(child, self);
      }
    }
    out << YAML::EndMap;
  };
  out << YAML::Key << key << YAML::Value;
  emit(root, emit);
}

}  // namespace

std::string to_yaml(const Scenario& s, Defaults defaults) {
  YAML::Emitter out;
  out.SetBoolFormat(YAML::TrueFalseBool);
  out << YAML::BeginMap;
  out << YAML::Key << "schema_version" << YAML::Value << 1;
  out << YAML::Key << "name" << YAML::Value << s.name;
  if (!s.description.empty()) out << YAML::Key << "description" << YAML::Value << s.description;
  key_enum(out, "framework", s.framework);
  emit_model(out, s.model);
  out << YAML::Key << "training" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "global_batch" << YAML::Value << s.training.global_batch;
  out << YAML::Key << "micro_batch" << YAML::Value << s.training.micro_batch;
  key_enum(out, "dtype", s.training.dtype);
  key_enum(out, "optimizer", s.training.optimizer);
  framework_key(out, s, defaults, "grad_dtype", s.training.grad_dtype.has_value(),
                std::string(to_string(s.gradient_dtype())));
  out << YAML::Key << "memory_headroom" << YAML::Value
      << fmt::format("{:g}%", 100 * s.training.memory_headroom);
  if (s.training.dtype == Dtype::kFp8)
    out << YAML::Key << "fp8_params" << YAML::Value << s.training.fp8_params;
  out << YAML::EndMap;
  emit_parallelism(out, s, defaults);
  const std::filesystem::path dir = s.path.parent_path();
  out << YAML::Key << "cluster" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "topology" << YAML::Value << s.cluster.topology_path.lexically_relative(dir).string();
  out << YAML::Key << "hardware" << YAML::Value << s.cluster.hardware_path.lexically_relative(dir).string();
  out << YAML::Key << "gpus" << YAML::Value << s.cluster.gpus;
  emit_what_if(out, "topology_set", s.cluster.topology.what_if);
  emit_what_if(out, "hardware_set", s.cluster.hardware.what_if);
  if (s.cluster.price_per_gpu_hour_usd) {
    out << YAML::Key << "cost" << YAML::Value << YAML::Flow << YAML::BeginMap << YAML::Key
        << "price_per_gpu_hour" << YAML::Value << fmt::format("{}USD", *s.cluster.price_per_gpu_hour_usd)
        << YAML::EndMap;
  }
  const Facility& facility = s.cluster.facility;
  if (facility.pue != 1 || facility.electricity_usd_per_kwh) {
    out << YAML::Key << "facility" << YAML::Value << YAML::Flow << YAML::BeginMap;
    out << YAML::Key << "pue" << YAML::Value << facility.pue;
    if (facility.electricity_usd_per_kwh) {
      out << YAML::Key << "electricity_price" << YAML::Value
          << fmt::format("{}USD/kWh", *facility.electricity_usd_per_kwh);
    }
    out << YAML::EndMap;
  }
  out << YAML::EndMap;
  if (s.stragglers.any()) emit_stragglers(out, s.stragglers);
  if (s.campaign.tokens > 0) emit_campaign(out, s.campaign);
  out << YAML::EndMap;
  return indent_comments(std::string(out.c_str()) + "\n");
}

}  // namespace trainsim::config
