// Expert parallelism against the model and the other degrees. Expert groups take the tensor-parallel
// ranks folded out of expert tensor parallelism (tp / expert_tp) first, then data-parallel ones.
#include <fmt/format.h>

#include "sim/config/plan_rules_groups.h"

namespace trainsim::config::internal {
namespace {

bool moe(const Scenario& s) { return s.model.moe.enabled(); }

// Tensor-parallel ranks folded into the expert groups; 0 when expert_tp does not divide tp.
int64_t fold(const Parallelism& p) {
  const int64_t etp = p.expert_tp_degree();
  return p.tp % etp == 0 ? p.tp / etp : 0;
}

// Whether ep and the fold nest: one divides the other.
bool ep_nests_in_fold(const Parallelism& p) {
  const int64_t f = fold(p);
  return f > 0 && (f % p.ep == 0 || p.ep % f == 0);
}

}  // namespace

void add_expert_rules(std::vector<PlanRule>& rules) {
  rules.push_back({"experts-need-moe",
                   {"parallelism.ep", "parallelism.expert_tp", "model.moe"},
                   kModelAndPlan,
                   [](const Scenario& s) -> std::optional<Breach> {
                     const Parallelism& p = s.parallelism;
                     if (moe(s) || (p.ep == 1 && p.expert_tp == 0)) return {};
                     return Breach(fmt::format("{} spreads experts, but the model has none; add a model.moe "
                                               "section or remove it",
                                               p.ep > 1 ? fmt::format("ep {}", p.ep)
                                                        : fmt::format("expert_tp {}", p.expert_tp)),
                                   p.ep > 1 ? "parallelism.ep" : "parallelism.expert_tp");
                   }});
  rules.push_back({"expert-tp-divides-tp",
                   {"parallelism.expert_tp", "parallelism.tp"},
                   kModelAndPlan,
                   [](const Scenario& s) -> std::optional<Breach> {
                     const Parallelism& p = s.parallelism;
                     if (!moe(s) || fold(p) > 0) return {};
                     return fmt::format("expert_tp {} must divide tp {}; choose it among the divisors of {}",
                                        p.expert_tp_degree(), p.tp, p.tp);
                   }});
  rules.push_back(
      {"ep-nests-in-fold",
       {"parallelism.ep", "parallelism.expert_tp"},
       kModelAndPlan,
       [](const Scenario& s) -> std::optional<Breach> {
         const Parallelism& p = s.parallelism;
         if (!moe(s) || fold(p) == 0 || ep_nests_in_fold(p)) return {};
         return fmt::format(
             "ep {} must divide tp / expert_tp = {} or be a multiple of it (expert groups take the "
             "folded tensor-parallel ranks first, then data-parallel ones)",
             p.ep, fold(p));
       }});
  rules.push_back(
      {"ep-divides-data-parallel",
       {"parallelism.ep", "parallelism.dp"},
       kModelAndPlan | kClusterGpus,
       [](const Scenario& s) -> std::optional<Breach> {
         const Parallelism& p = s.parallelism;
         if (!moe(s) || !ep_nests_in_fold(p) || (fold(p) * p.dp) % p.ep == 0) return {};
         if (fold(p) == 1) {
           return fmt::format(
               "ep {} must divide dp {} (expert parallelism spreads the experts over data-parallel "
               "ranks); choose ep among the divisors of {}",
               p.ep, p.dp, p.dp);
         }
         return fmt::format(
             "ep {} must divide (tp / expert_tp) x dp = {} x {} (expert groups take the folded "
             "tensor-parallel ranks, then data-parallel ones); choose ep among the divisors of {}",
             p.ep, fold(p), p.dp, fold(p) * p.dp);
       }});
  rules.push_back({"ep-divides-experts",
                   {"parallelism.ep", "model.moe.experts"},
                   kModelAndPlan,
                   [](const Scenario& s) -> std::optional<Breach> {
                     if (!moe(s) || s.model.moe.experts % s.parallelism.ep == 0) return {};
                     return fmt::format("ep {} must divide the {} experts of each MoE layer",
                                        s.parallelism.ep, s.model.moe.experts);
                   }});
  rules.push_back({"expert-tp-divides-expert-ffn",
                   {"parallelism.expert_tp", "model.moe.expert_ffn_hidden"},
                   kModelAndPlan,
                   [](const Scenario& s) -> std::optional<Breach> {
                     const int64_t etp = s.parallelism.expert_tp_degree();
                     if (!moe(s) || s.model.moe.expert_ffn_hidden % etp == 0) return {};
                     return fmt::format("expert_tp {} must divide moe.expert_ffn_hidden {}", etp,
                                        s.model.moe.expert_ffn_hidden);
                   }});
  rules.push_back({"tp-divides-shared-experts",
                   {"parallelism.tp", "model.moe.shared_experts"},
                   kModelAndPlan,
                   [](const Scenario& s) -> std::optional<Breach> {
                     const Moe& m = s.model.moe;
                     if (!moe(s) || (m.shared_experts * m.expert_ffn_hidden) % s.parallelism.tp == 0)
                       return {};
                     return fmt::format(
                         "tp {} must divide the shared experts' {} x {} columns (Megatron splits them across "
                         "tensor-parallel ranks like a dense MLP)",
                         s.parallelism.tp, m.shared_experts, m.expert_ffn_hidden);
                   }});
  rules.push_back({"experts-with-tp-need-sequence-parallel",
                   {"parallelism.sequence_parallel", "parallelism.tp"},
                   kModelAndPlan,
                   [](const Scenario& s) -> std::optional<Breach> {
                     const Parallelism& p = s.parallelism;
                     if (!moe(s) || p.tp == 1 || p.sequence_parallel == SequenceParallel::kMegatron ||
                         p.sequence_parallel == SequenceParallel::kRing) {
                       return {};
                     }
                     return fmt::format(
                         "a mixture of experts with tp {} needs sequence_parallel: megatron (Megatron-LM "
                         "requires it: the token dispatcher works on sequence-sharded tokens)",
                         p.tp);
                   }});
  rules.push_back({"experts-without-fpdt",
                   {"parallelism.sequence_parallel", "model.moe"},
                   kModelAndPlan,
                   [](const Scenario& s) -> std::optional<Breach> {
                     if (!moe(s) || s.parallelism.sequence_parallel != SequenceParallel::kFpdt) return {};
                     return std::string(
                         "a mixture of experts with sequence_parallel: fpdt is not modelled (FPDT chunks a "
                         "dense MLP); use ulysses or ring");
                   }});
  rules.push_back({"experts-without-zero-3",
                   {"parallelism.zero_stage", "model.moe"},
                   kModelAndPlan,
                   [](const Scenario& s) -> std::optional<Breach> {
                     if (!moe(s) || s.parallelism.zero_stage != 3) return {};
                     return std::string(
                         "a mixture of experts with zero_stage 3 is not modelled; use zero_stage 0, 1 or 2 "
                         "(expert states are sharded over their expert-data-parallel group)");
                   }});
  // Megatron-Core's TransformerConfig checks for overlap_moe_expert_parallel_comm, the first that fails
  // (Parallelism::ep_comm_overlap_blocker).
  using Blocker = Parallelism::EpOverlapBlocker;
  rules.push_back({"ep-comm-overlap-needs-ep",
                   {"parallelism.ep_comm_overlap", "parallelism.ep"},
                   kModelAndPlan,
                   [](const Scenario& s) -> std::optional<Breach> {
                     const Parallelism& p = s.parallelism;
                     if (!p.ep_comm_overlap || p.ep_comm_overlap_blocker() != Blocker::kNoExpertParallelism)
                       return {};
                     return std::string(
                         "ep_comm_overlap hides expert all-to-alls, so it needs ep > 1 (Megatron-Core "
                         "asserts it); set ep or remove ep_comm_overlap");
                   }});
  rules.push_back({"ep-comm-overlap-schedule",
                   {"parallelism.ep_comm_overlap", "parallelism.schedule"},
                   kParallelismSection,
                   [](const Scenario& s) -> std::optional<Breach> {
                     const Parallelism& p = s.parallelism;
                     if (!p.ep_comm_overlap || p.ep_comm_overlap_blocker() != Blocker::kSchedule) return {};
                     return fmt::format(
                         "ep_comm_overlap pairs the forwards and backwards of 1F1B: with pp {} it needs "
                         "schedule: {}, not {}",
                         p.pp, p.pp == 1 ? "1f1b" : "interleaved (Megatron-Core requires a virtual pipeline)",
                         to_string(p.schedule));
                   }});
  rules.push_back({"ep-comm-overlap-without-full-recompute",
                   {"parallelism.ep_comm_overlap", "parallelism.recompute"},
                   kParallelismSection,
                   [](const Scenario& s) -> std::optional<Breach> {
                     const Parallelism& p = s.parallelism;
                     if (!p.ep_comm_overlap || p.ep_comm_overlap_blocker() != Blocker::kFullRecompute)
                       return {};
                     return std::string(
                         "ep_comm_overlap cannot run with recompute: full (Megatron-Core refuses it); use "
                         "recompute: selective or none");
                   }});
}

}  // namespace trainsim::config::internal
