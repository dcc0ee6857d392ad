// Tensor and pipeline parallelism against the model, the pipeline schedules, recomputation.
#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "sim/config/plan_rules_groups.h"

namespace trainsim::config::internal {
namespace {

bool megatron_sequence_parallel(const Parallelism& p) {
  return p.sequence_parallel == SequenceParallel::kMegatron || p.sequence_parallel == SequenceParallel::kRing;
}

bool stage_layers_given(const Parallelism& p) { return p.first_stage_layers > 0 || p.last_stage_layers > 0; }

// The stage-layer keys the scenario sets, as "first_stage_layers 6".
std::vector<std::string> stage_layers_set(const Parallelism& p) {
  std::vector<std::string> given;
  if (p.first_stage_layers > 0) given.push_back(fmt::format("first_stage_layers {}", p.first_stage_layers));
  if (p.last_stage_layers > 0) given.push_back(fmt::format("last_stage_layers {}", p.last_stage_layers));
  return given;
}

std::string stage_layers_key(const Parallelism& p) {
  return p.first_stage_layers > 0 ? "parallelism.first_stage_layers" : "parallelism.last_stage_layers";
}

}  // namespace

void add_layout_rules(std::vector<PlanRule>& rules) {
  // The decoder holds each degree to at least 1; a scenario built in code may not.
  rules.push_back({"degrees-at-least-one",
                   {"parallelism"},
                   kParallelismSection,
                   [](const Scenario& s) -> std::optional<Breach> {
                     const Parallelism& p = s.parallelism;
                     if (std::min({p.tp, p.pp, p.dp, p.sp, p.vpp, p.ep}) >= 1 && p.expert_tp >= 0) return {};
                     return fmt::format(
                         "every degree must be at least 1 (expert_tp 0 or more): tp {}, pp {}, dp {}, sp {}, "
                         "vpp {}, ep {}, expert_tp {}",
                         p.tp, p.pp, p.dp, p.sp, p.vpp, p.ep, p.expert_tp);
                   },
                   /*stops=*/true});
  rules.push_back({"tp-comm-overlap-needs-sequence-parallel",
                   {"parallelism.tp_comm_overlap", "parallelism.sequence_parallel"},
                   kParallelismSection,
                   [](const Scenario& s) -> std::optional<Breach> {
                     const Parallelism& p = s.parallelism;
                     if (!p.tp_comm_overlap || p.tp == 1 || megatron_sequence_parallel(p)) return {};
                     return fmt::format(
                         "tp_comm_overlap with tp {} needs sequence_parallel: megatron (Transformer Engine "
                         "overlaps the all-gathers and reduce-scatters of sequence parallelism with the "
                         "GEMMs, not all-reduces)",
                         p.tp);
                   }});
  rules.push_back({"tp-divides-heads",
                   {"parallelism.tp", "model.heads"},
                   kModelAndPlan,
                   [](const Scenario& s) -> std::optional<Breach> {
                     if (s.model.heads % s.parallelism.tp == 0) return {};
                     return fmt::format(
                         "tp {} must divide the {} attention heads; choose tp among the divisors of {}",
                         s.parallelism.tp, s.model.heads, s.model.heads);
                   }});
  rules.push_back({"tp-divides-kv-heads",
                   {"parallelism.tp", "model.kv_heads"},
                   kModelAndPlan,
                   [](const Scenario& s) -> std::optional<Breach> {
                     const int64_t tp = s.parallelism.tp;
                     if (s.model.heads % tp != 0 || s.model.kv_heads % tp == 0) return {};
                     return fmt::format(
                         "tp {} must divide the {} key/value heads (Megatron splits K/V heads across "
                         "tensor-parallel ranks); use tp <= {}",
                         tp, s.model.kv_heads, s.model.kv_heads);
                   }});
  rules.push_back({"tp-divides-ffn",
                   {"parallelism.tp", "model.ffn_hidden"},
                   kModelAndPlan,
                   [](const Scenario& s) -> std::optional<Breach> {
                     if (s.model.ffn_hidden % s.parallelism.tp == 0) return {};
                     return fmt::format(
                         "tp {} must divide ffn_hidden {} (Megatron splits the MLP's columns across "
                         "tensor-parallel ranks); choose tp among its divisors",
                         s.parallelism.tp, s.model.ffn_hidden);
                   }});
  rules.push_back({"stage-layers-need-plain-pipeline",
                   {"parallelism.first_stage_layers", "parallelism.last_stage_layers"},
                   kParallelismSection,
                   [](const Scenario& s) -> std::optional<Breach> {
                     const Parallelism& p = s.parallelism;
                     if (!stage_layers_given(p) || (p.pp > 1 && p.vpp == 1 && !p.uneven_stages)) return {};
                     return Breach(
                         "first_stage_layers and last_stage_layers set the layers of the first and last of "
                         "pp > 1 stages without virtual stages (vpp 1) and without uneven_stages; remove "
                         "them or change the plan",
                         stage_layers_key(p));
                   }});
  rules.push_back(
      {"stage-layers-share-evenly",
       {"parallelism.first_stage_layers", "parallelism.last_stage_layers", "model.layers"},
       kModelAndPlan,
       [](const Scenario& s) -> std::optional<Breach> {
         const Parallelism& p = s.parallelism;
         if (!stage_layers_given(p) || p.pp == 1 || p.vpp > 1 || p.uneven_stages) return {};
         // The stages between the first and the last share the remaining layers evenly.
         const int64_t middle_stages =
             p.pp - (p.first_stage_layers > 0 ? 1 : 0) - (p.last_stage_layers > 0 ? 1 : 0);
         const int64_t middle_layers = s.model.layers - p.first_stage_layers - p.last_stage_layers;
         if (middle_stages == 0 ? middle_layers == 0
                                : middle_layers >= middle_stages && middle_layers % middle_stages == 0) {
           return {};
         }
         const std::vector<std::string> given = stage_layers_set(p);
         return Breach(fmt::format("{} layers less {} leave {} for the other {} stages, which must "
                                   "share them evenly (at least one each); change {}",
                                   s.model.layers, fmt::join(given, " and "), middle_layers, middle_stages,
                                   fmt::join(given, " or ")),
                       stage_layers_key(p));
       }});
  rules.push_back({"layers-fill-stages",
                   {"parallelism.pp", "parallelism.vpp", "model.layers"},
                   kModelAndPlan,
                   [](const Scenario& s) -> std::optional<Breach> {
                     const Parallelism& p = s.parallelism;
                     if (stage_layers_given(p) || s.model.layers >= p.pp * p.vpp) return {};
                     return fmt::format(
                         "pp·vpp = {}·{} = {} model chunks but only {} layers; lower pp or vpp", p.pp, p.vpp,
                         p.pp * p.vpp, s.model.layers);
                   }});
  rules.push_back({"stages-divide-layers",
                   {"parallelism.pp", "parallelism.vpp", "parallelism.uneven_stages", "model.layers"},
                   kModelAndPlan,
                   [](const Scenario& s) -> std::optional<Breach> {
                     const Parallelism& p = s.parallelism;
                     if (stage_layers_given(p) || p.uneven_stages || s.model.layers < p.pp * p.vpp ||
                         s.model.layers % (p.pp * p.vpp) == 0) {
                       return {};
                     }
                     return fmt::format(
                         "pp·vpp = {}·{} = {} must divide the {} layers; change pp or vpp, or set "
                         "uneven_stages: true to give some stages one layer less",
                         p.pp, p.vpp, p.pp * p.vpp, s.model.layers);
                   }});
  rules.push_back({"interleaved-needs-vpp",
                   {"parallelism.vpp", "parallelism.schedule"},
                   kParallelismSection,
                   [](const Scenario& s) -> std::optional<Breach> {
                     const Parallelism& p = s.parallelism;
                     if (p.schedule != Schedule::kInterleaved || p.vpp > 1) return {};
                     return std::string(
                         "schedule interleaved needs vpp > 1 model chunks per stage; set vpp or use 1f1b");
                   }});
  rules.push_back({"vpp-needs-chunked-schedule",
                   {"parallelism.vpp", "parallelism.schedule"},
                   kParallelismSection,
                   [](const Scenario& s) -> std::optional<Breach> {
                     const Parallelism& p = s.parallelism;
                     if (chunked_schedule(p.schedule) || p.vpp == 1) return {};
                     return fmt::format(
                         "vpp {} only makes sense with schedule: interleaved, zero-bubble, zb-v or dualpipev",
                         p.vpp);
                   }});
  rules.push_back({"v-schedule-needs-two-chunks",
                   {"parallelism.vpp", "parallelism.schedule"},
                   kParallelismSection,
                   [](const Scenario& s) -> std::optional<Breach> {
                     const Parallelism& p = s.parallelism;
                     if (!v_shaped_schedule(p.schedule) || p.vpp == 2) return {};
                     return fmt::format(
                         "schedule {} places 2 model chunks per stage in a V; set vpp: 2 (got {})",
                         to_string(p.schedule), p.vpp);
                   }});
  rules.push_back({"schedule-needs-pipeline",
                   {"parallelism.schedule", "parallelism.pp"},
                   kParallelismSection,
                   [](const Scenario& s) -> std::optional<Breach> {
                     const Parallelism& p = s.parallelism;
                     if (p.schedule == Schedule::kGpipe || p.schedule == Schedule::kOneFOneB || p.pp > 1)
                       return {};
                     return fmt::format("schedule {} needs pp > 1", to_string(p.schedule));
                   }});
  rules.push_back({"cpu-checkpointing-needs-full-recompute",
                   {"parallelism.cpu_checkpointing", "parallelism.recompute"},
                   kParallelismSection,
                   [](const Scenario& s) -> std::optional<Breach> {
                     const Parallelism& p = s.parallelism;
                     if (!p.cpu_checkpointing || p.recompute == Recompute::kFull) return {};
                     return std::string(
                         "CPU checkpointing keeps the inputs of fully recomputed layers on the host; set "
                         "recompute: full");
                   }});
}

}  // namespace trainsim::config::internal
