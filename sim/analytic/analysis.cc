#include "sim/analytic/analysis.h"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "sim/analytic/bubble.h"
#include "sim/workload/layout.h"
#include "sim/workload/plan.h"
#include "sim/workload/shapes.h"

namespace trainsim::analytic {
namespace {

constexpr double kTolerance = 1e-9;

double relative(double graph, double closed) {
  if (closed == 0) return graph == 0 ? 0 : 1;
  return (graph - closed) / closed;
}

}  // namespace

bool gpt_style(const config::Model& m) {
  return m.position_embedding == config::PositionEmbedding::kLearned &&
         m.activation == config::Activation::kGelu && m.norm == config::Norm::kLayerNorm &&
         m.kv_heads == m.heads && m.ffn_hidden == 4 * m.hidden && m.heads * m.head_dim == m.hidden &&
         m.tied_embeddings && m.linear_bias;
}

double pipeline_bubble_fraction(const config::Scenario& scenario, const IterationFlops& flops) {
  // The passes' shares by FLOPs: W repeats the forward GEMMs; B the GEMMs, twice the attention
  // cores, and what recomputation adds.
  const double forward = flops.forward_layers + flops.forward_logits;
  const PassShares shares{forward / flops.hardware, (forward - flops.forward_attention) / flops.hardware};
  const config::Parallelism& p = scenario.parallelism;
  return pipeline_bubble_fraction(p.schedule, p.pp, scenario.micro_batches(), p.vpp, shares);
}

Analysis analyze(const config::Scenario& scenario) {
  const workload::ParallelPlan plan = workload::make_plan(scenario);
  const workload::RankShapes s = workload::derive_shapes(scenario, plan);
  const workload::StageLayout layout = workload::partition_layers(s);
  const config::Model& m = scenario.model;
  const config::Parallelism& p = scenario.parallelism;
  Analysis a;
  a.parameters = parameter_count(m);
  a.flops = iteration_flops(scenario);
  const double batch = static_cast<double>(scenario.training.global_batch);
  if (gpt_style(m)) {
    a.narayanan_parameters = narayanan_parameters(m);
    a.korthikanti_model_flops = korthikanti_model_flops(m, batch);
    if (p.recompute == config::Recompute::kFull) a.narayanan_flops = narayanan_flops(m, batch);
    if (p.recompute == config::Recompute::kSelective) {
      a.korthikanti_selective_hardware_flops = korthikanti_selective_hardware_flops(m, batch);
    }
  }
  a.bubble_fraction = pipeline_bubble_fraction(scenario, a.flops);
  ActivationConfig row;
  const bool table2 = korthikanti_config(scenario, &row);
  for (int64_t stage = 0; stage < s.pp; ++stage) {
    StageAnalysis st;
    st.stage = stage;
    for (int64_t chunk = 0; chunk < s.vpp; ++chunk)
      st.layers += layout.layer_count[layout.virtual_stage(stage, chunk)];
    st.params_per_rank = workload::stage_params(s, layout, stage);
    st.model_state = stage_model_state(s, layout, plan, stage, scenario.training.optimizer);
    if (table2) {
      const double layer = korthikanti_layer_activation_bytes(row, static_cast<double>(m.seq_len), s.batch,
                                                              m.hidden, m.heads, s.tp);
      st.layer_activation_bytes = layer;
      if (stage == 0) {
        st.stage_activation_bytes = korthikanti_first_stage_activation_bytes(layer, s.layers, s.pp, s.vpp,
                                                                             s.micro_batches, p.schedule);
      } else if (p.schedule != config::Schedule::kInterleaved) {
        // Stage k of 1F1B keeps min(p - k, m) micro-batches in flight, GPipe all m, the zero-bubble
        // schedules min(p, m) on every stage.
        const int64_t in_flight = p.schedule == config::Schedule::kGpipe ? s.micro_batches
                                  : config::split_backward_schedule(p.schedule)
                                      ? std::min(s.pp, s.micro_batches)
                                      : std::min(s.pp - stage, s.micro_batches);
        st.stage_activation_bytes = layer * static_cast<double>(st.layers) * static_cast<double>(in_flight);
      }
    }
    st.comm = expected_comm(scenario, stage);
    a.stages.push_back(std::move(st));
  }
  if (config::sequence_scheme(p.sequence_parallel).chunked) a.fpdt = fpdt_memory(scenario);
  return a;
}

std::vector<Comparison> compare(const config::Scenario& scenario, const Analysis& a,
                                const workload::WorkloadSummary& summary) {
  const config::Model& m = scenario.model;
  const config::Parallelism& p = scenario.parallelism;
  const bool padded_vocab = m.vocab % p.tp != 0;
  const std::string vocab_note =
      padded_vocab ? fmt::format("each TP rank holds ceil(V/t) = {} vocabulary rows, {} more than V in total",
                                 (m.vocab + p.tp - 1) / p.tp, (m.vocab + p.tp - 1) / p.tp * p.tp - m.vocab)
                   : "";
  std::vector<Comparison> rows;
  const auto add = [&rows](std::string quantity, std::string scope, double graph, double closed,
                           std::string note) {
    const double diff = relative(graph, closed);
    if (note.empty() && std::abs(diff) > kTolerance) note = "unexplained";
    rows.push_back({std::move(quantity), std::move(scope), graph, closed, diff, std::move(note)});
  };
  add("parameters", "model", static_cast<double>(summary.parameters), static_cast<double>(a.parameters.total),
      vocab_note);
  if (a.narayanan_parameters) {
    add("parameters (Narayanan formula)", "model", static_cast<double>(summary.parameters),
        *a.narayanan_parameters,
        "the formula leaves out the final LayerNorm (2h)" +
            (padded_vocab ? "; " + vocab_note : std::string()));
  }
  add("model_flops_per_iteration", "iteration", summary.iteration.model, a.flops.model, vocab_note);
  add("hardware_flops_per_iteration", "iteration", summary.iteration.hardware, a.flops.hardware, vocab_note);
  if (a.korthikanti_model_flops) {
    add("model_flops_per_iteration (Korthikanti formula)", "iteration", summary.iteration.model,
        *a.korthikanti_model_flops, vocab_note);
  }
  if (a.narayanan_flops) {
    add("hardware_flops_per_iteration (Narayanan formula)", "iteration", summary.iteration.hardware,
        *a.narayanan_flops, vocab_note);
  }
  if (a.korthikanti_selective_hardware_flops) {
    add("hardware_flops_per_iteration (Korthikanti selective formula)", "iteration",
        summary.iteration.hardware, *a.korthikanti_selective_hardware_flops,
        "the paper charges the recomputed attention core 12*s^2*h per layer and sequence; the graph runs its "
        "forward once (4*s^2*h)");
  }
  add("executed_flops_per_iteration", "iteration", summary.iteration.executed, a.flops.hardware,
      "kernels execute causal attention blocks at half their dense FLOPs and fused attention backwards "
      "recompute the scores (2.5x the forward instead of 2x); optimizer steps count ~12 FLOPs per parameter");

  for (const workload::ClassSummary& cs : summary.classes) {
    const StageAnalysis& st = a.stages[cs.cls.stage];
    const std::string scope = fmt::format("class {} (stage {})", cs.cls.id, cs.cls.stage);
    const auto& hbm = cs.memory.hbm_max;
    add("weights_bytes", scope, hbm[static_cast<int>(workload::MemoryCategory::kWeights)],
        st.model_state.weights, "");
    add("gradients_bytes", scope, hbm[static_cast<int>(workload::MemoryCategory::kGradients)],
        st.model_state.gradients, "");
    add("optimizer_bytes", scope, hbm[static_cast<int>(workload::MemoryCategory::kOptimizer)],
        st.model_state.optimizer, "");
    if (st.stage_activation_bytes) {
      add("activations_bytes (Korthikanti)", scope,
          hbm[static_cast<int>(workload::MemoryCategory::kActivations)], *st.stage_activation_bytes,
          "the graph also holds what Korthikanti leaves out: the LM head's fp32 logits, received pipeline "
          "inputs "
          "before their layer runs, and (with full recompute) a layer's rematerialised activations during "
          "its "
          "backward");
    }
    // Communication, per (kind, group).
    std::map<std::pair<int, int>, std::pair<double, double>> graph_volume, closed_volume;  // volume, calls
    for (const workload::CommLogEntry& e : cs.comm) {
      auto& v = graph_volume[{static_cast<int>(e.kind), static_cast<int>(e.group)}];
      v.first += e.volume_bytes;
      v.second += static_cast<double>(e.calls);
    }
    for (const ExpectedComm& e : st.comm) {
      auto& v = closed_volume[{static_cast<int>(e.kind), static_cast<int>(e.group)}];
      v.first += e.volume_bytes;
      v.second += e.calls;
    }
    std::map<std::pair<int, int>, bool> keys;
    for (const auto& [k, v] : graph_volume) keys[k] = true;
    for (const auto& [k, v] : closed_volume) keys[k] = true;
    for (const auto& [k, unused] : keys) {
      const auto kind = static_cast<workload::CommKind>(k.first);
      const auto group = static_cast<workload::GroupKind>(k.second);
      if (graph_volume[k].first == 0 && closed_volume[k].first == 0)
        continue;  // receives: counted at the sender
      add(fmt::format("comm_volume_bytes {} {}", workload::to_string(kind), workload::to_string(group)),
          scope, graph_volume[k].first, closed_volume[k].first, "");
    }
  }
  add("pipeline_bubble_fraction", "iteration", a.bubble_fraction, a.bubble_fraction,
      "closed form only; the simulated bubble comes from running the graphs");
  return rows;
}

nlohmann::json to_json(const Analysis& a) {
  nlohmann::json j;
  j["parameters"] = {{"total", a.parameters.total},
                     {"per_layer", a.parameters.per_layer},
                     {"per_moe_layer", a.parameters.per_moe_layer},
                     {"moe_layers", a.parameters.moe_layers},
                     {"active", a.parameters.active},
                     {"embedding", a.parameters.embedding},
                     {"final_norm", a.parameters.final_norm},
                     {"lm_head", a.parameters.lm_head}};
  if (a.narayanan_parameters) j["parameters"]["narayanan_formula"] = *a.narayanan_parameters;
  j["model_flops_per_iteration"] = a.flops.model;
  j["hardware_flops_per_iteration"] = a.flops.hardware;
  if (a.narayanan_flops) j["narayanan_flops_per_iteration"] = *a.narayanan_flops;
  if (a.korthikanti_model_flops) j["korthikanti_model_flops_per_iteration"] = *a.korthikanti_model_flops;
  if (a.korthikanti_selective_hardware_flops) {
    j["korthikanti_selective_hardware_flops_per_iteration"] = *a.korthikanti_selective_hardware_flops;
  }
  j["pipeline_bubble_fraction"] = a.bubble_fraction;
  nlohmann::json stages = nlohmann::json::array();
  for (const StageAnalysis& st : a.stages) {
    nlohmann::json s = {{"stage", st.stage},
                        {"layers", st.layers},
                        {"params_per_rank", st.params_per_rank},
                        {"weights_bytes", st.model_state.weights},
                        {"gradients_bytes", st.model_state.gradients},
                        {"optimizer_bytes", st.model_state.optimizer}};
    if (st.layer_activation_bytes) s["korthikanti_layer_activation_bytes"] = *st.layer_activation_bytes;
    if (st.stage_activation_bytes) s["korthikanti_stage_activation_bytes"] = *st.stage_activation_bytes;
    nlohmann::json comm = nlohmann::json::array();
    for (const ExpectedComm& e : st.comm) {
      comm.push_back({{"kind", workload::to_string(e.kind)},
                      {"group", workload::to_string(e.group)},
                      {"calls", e.calls},
                      {"bytes_per_call", e.bytes_per_call},
                      {"volume_bytes", e.volume_bytes},
                      {"source", e.source}});
    }
    s["comm"] = std::move(comm);
    stages.push_back(std::move(s));
  }
  j["stages"] = std::move(stages);
  if (a.fpdt) {
    const FpdtMemory& f = *a.fpdt;
    j["fpdt"] = {{"chunks", f.chunks},
                 {"q_chunk_bytes", f.q_chunk_bytes},
                 {"kv_chunk_bytes", f.kv_chunk_bytes},
                 {"out_accumulator_bytes", f.out_accumulator_bytes},
                 {"x_chunk_bytes", f.x_chunk_bytes},
                 {"sequence_tensor_bytes", f.sequence_tensor_bytes},
                 {"host_per_live_layer_bytes", f.host_per_live_layer_bytes},
                 {"host_checkpoint_bytes", f.host_checkpoint_bytes}};
  }
  return j;
}

nlohmann::json to_json(const Comparison& c) {
  return {{"quantity", c.quantity},
          {"scope", c.scope},
          {"graph", c.graph},
          {"closed_form", c.closed_form},
          {"relative_difference", c.relative_difference},
          {"note", c.note}};
}

}  // namespace trainsim::analytic
