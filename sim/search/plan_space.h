// The space `trainsim search` explores: every parallel plan of a scenario's model on N GPUs, as the
// values of the scenario keys a plan consists of. Enumeration only proposes values from each key's
// natural domain; whether a plan is valid is decided by the plan rules (config/plan_rules.h, through
// candidate.h), never here.
//
// Domains, for N GPUs, L layers, sequence length S and global batch B:
//   tp, pp, sp        every ordered factorisation tp·pp·sp·dp = N (dp derived)
//   sequence_parallel none, or megatron when tp > 1 (with tp 1 it is the same plan as none), for sp 1;
//                     ulysses, ring and fpdt for sp > 1
//   cp_comm           p2p and all_gather (ring only)
//   fpdt.chunk_tokens S / u for u = 1, 2, 4, ... kMaxFpdtChunks (FPDT only)
//   schedule, vpp     1f1b; with pp > 1 also gpipe and zero-bubble, interleaved and zero-bubble with
//                     every vpp > 1 dividing floor(L / pp), and with vpp 2 zb-v and dualpipev (the
//                     zero-bubble family not with FPDT)
//   micro_batch       every divisor of the replica's batch B / dp; when dp does not divide B, only 1
//                     (so the plan rules name the one that rejects the layout)
//   ep                1; for an MoE model also every divisor of dp that divides the experts
//   expert_tp         tp; for an MoE model with tp > 1 also 1 (MoE parallel folding), with every ep
//                     that divides tp x dp and the experts and divides tp or is a multiple of it
//   zero_stage        0, 1, 2, 3
//   recompute         none, selective, full
// Everything else (rank order, bucket size, FPDT offload, CPU checkpointing, ...) stays as the
// scenario has it.
#ifndef TRAINSIM_SIM_SEARCH_PLAN_SPACE_H_
#define TRAINSIM_SIM_SEARCH_PLAN_SPACE_H_

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/config/scenario.h"

namespace trainsim::search {

// Largest FPDT chunk count u the search proposes (the seed paper's 2M-token runs use u = 32).
inline constexpr int64_t kMaxFpdtChunks = 64;

inline constexpr std::array<int, 4> kZeroStages = {0, 1, 2, 3};
inline constexpr std::array<config::Recompute, 3> kRecomputeModes = {
    config::Recompute::kNone, config::Recompute::kSelective, config::Recompute::kFull};
// Plans per layout of the whole space: one per ZeRO stage and recompute mode.
inline constexpr size_t kVariantsPerLayout = kZeroStages.size() * kRecomputeModes.size();

// One point of the space: the values of the keys a plan sets.
struct PlanChoice {
  int64_t tp = 1, pp = 1, dp = 1, sp = 1, vpp = 1;
  int64_t ep = 1;         // expert parallelism (MoE models): a divisor of dp and of the experts
  int64_t expert_tp = 0;  // expert tensor parallelism (MoE models); 0: tp
  config::Schedule schedule = config::Schedule::kOneFOneB;
  config::SequenceParallel sequence_parallel = config::SequenceParallel::kNone;
  config::CpComm cp_comm = config::CpComm::kP2p;  // ring only
  int64_t fpdt_chunk_tokens = 0;                  // FPDT only; 0 otherwise
  int64_t micro_batch = 1;
  int zero_stage = 0;
  config::Recompute recompute = config::Recompute::kNone;

  // The plan `scenario` has.
  static PlanChoice of(const config::Scenario& scenario);

  // Writes the choice into `scenario` (parallelism, training.micro_batch and cluster.gpus = gpus),
  // turning ep_comm_overlap off where the plan cannot run it.
  void apply(int64_t gpus, config::Scenario& scenario) const;
  // The `--set` arguments that select this plan on top of the scenario, e.g. "parallelism.tp=8".
  std::vector<std::string> overrides(int64_t gpus) const;
  // Those of overrides() that change `base` (cluster.gpus included), and ep_comm_overlap=false where
  // apply() turns the base's off.
  std::vector<std::string> overrides_from(const config::Scenario& base, int64_t gpus) const;
  // A short human-readable form: "tp8 pp4 dp16 vpp5 interleaved megatron zero1 selective mb1".
  std::string describe() const;
  nlohmann::json to_json() const;
};

// The values a search is held to (`trainsim search --tp 4,8 --max-pp 8 --zero 1 ...`): a plan is
// in the space only if each of its keys is among the listed values; an empty list leaves the key
// free, a bound of 0 is no bound.
struct PlanPins {
  std::vector<int64_t> tp, pp, dp, sp, vpp, ep, micro_batch;
  std::vector<int> zero_stage;
  std::vector<config::Recompute> recompute;
  std::vector<config::Schedule> schedule;
  std::vector<config::SequenceParallel> sequence_parallel;
  int64_t max_tp = 0, max_pp = 0;

  // Whether `layout`'s keys other than zero_stage and recompute are allowed.
  bool admits(const PlanChoice& layout) const;
  // "tp 4,8; pp <= 8; zero 1" ("" with no pin), for messages and the report.
  std::string describe() const;
};

// The plans of one layout differ only in ZeRO stage and recompute mode. Index i of the space is
// layout i / variants() with variant i % variants(): zero_stages[v / recomputes], recompute_modes[v %
// recomputes].
struct PlanSpace {
  int64_t gpus = 0;
  std::vector<PlanChoice> layouts;  // zero_stage and recompute as in the scenario
  std::vector<int> zero_stages{kZeroStages.begin(), kZeroStages.end()};
  std::vector<config::Recompute> recompute_modes{kRecomputeModes.begin(), kRecomputeModes.end()};

  size_t variants() const { return zero_stages.size() * recompute_modes.size(); }
  size_t size() const { return layouts.size() * variants(); }
  PlanChoice at(size_t index) const;
};

// The space for `scenario`'s model, training batch and sequence length on `gpus` GPUs, in a fixed
// order (tp, pp, sp, kind, chunk, schedule, vpp, micro-batch ascending), held to `pins`.
PlanSpace enumerate_plans(const config::Scenario& scenario, int64_t gpus, const PlanPins& pins = {});

}  // namespace trainsim::search

#endif  // TRAINSIM_SIM_SEARCH_PLAN_SPACE_H_
