// `trainsim search`: the best parallel plans of a scenario's model on N GPUs of its cluster.
//
// 1. Enumerate the plan space (plan_space.h).
// 2. Screen every plan, in forked children (screening.h): the plan rules, duplicates, the memory
//    lower bound against the usable HBM and a lower bound on the iteration time; then the closed-form
//    iteration time (estimate/iteration_time.h) of the plans left, in order of that lower bound,
//    until it exceeds (1 + margin) x the closed form of the K-th estimated plan that fits (those
//    beyond wait, and step 3 estimates any that its own limit reaches).
// 3. Simulate in order of closed-form time, each simulation in its own forked child (SimGrid allows
//    one simulation per process), until K simulated plans fit in memory; let E be the closed-form
//    time of the K-th of them. Then simulate every remaining plan whose closed-form time is at most
//    (1 + margin) x E; the others are pruned as slower. These simulations use the ideal network
//    whatever the search's network: it plays the same graphs without flows, 1.6x faster than
//    SimGrid on Llama-3 70B's scenario 06 and 25x on Qwen3-235B with EP32 (all-to-alls). A plan with
//    many micro-batches is simulated at the two counts of its schedule's steady state
//    (workload::steady_state_counts) and its iteration extrapolated to its m micro-batches: a
//    pipeline repeats itself from there on, so the extrapolation is exact (the full simulation of
//    step 4 checks it on every reported plan: SearchResult::extrapolation) and the cost of a
//    simulation no longer grows with m (Llama-3 70B on 256 GPUs, m = 64: 4 + 8 micro-batches
//    instead of 64). GPipe's memory peak, which grows with m, is extrapolated the same way.
// 4. With SimGrid (the refinement), simulate the fitting plans of step 3 on SimGrid, at the counts of
//    step 3 and extrapolated as it does (SimGrid repeats its steady state too: on scenario 06 the
//    extrapolation from 4 and 8 micro-batches meets the 64 of a full run to 1e-8, at a third of its
//    cost), in order of their step-3 time: the first K and then every one whose step-3 time is at
//    most (1 + refine_margin) x that of the K-th, the others pruned as slower. Then simulate in full
//    on the search's network, for their run reports, the first K by the last time (refined, or
//    step 3's on the ideal network) and those tied with the K-th: their full times check the
//    extrapolation (SearchResult::extrapolation) and rank them.
// 5. Rank the plans of the last step by the objective.
//
// Why the time pruning is safe. Write r(p) = simulated / closed-form time of plan p. If r varies
// across plans by less than a factor 1 + margin, a pruned plan c (closed form > (1 + margin) E)
// has simulated time r(c) x closed(c) > r(c) (1 + margin) E > r(b) x closed(b) for every one of
// the K fitting plans b with closed(b) <= E, so c cannot be among the best K. The closed form
// (estimate/iteration_time.h) times the same operation graphs with the same cost model and
// alpha-beta communication and adds the formula bubble; it leaves out congestion and the exact
// pipeline interplay, which move plans of one model and cluster alike. Measured spreads of r:
//   ideal network  1.052 over eleven Llama-3-70B plans on 512 H100s (pp 1 to 16; 1F1B, interleaved,
//                  GPipe; r 0.936 .. 0.985); 1.121 over the 946 fitting plans the search of that
//                  case simulated (its best plans have r 0.956 .. 0.960)
//   SimGrid        1.069 over the same eleven plans (r 0.944 .. 1.010); 1.11 over the 15 best plans
//                  of Llama-3-8B at 128Ki tokens on 8 H100s (r 1.00 .. 1.11)
// A pruned plan beats the K-th only if its r is below that plan's by more than the margin: with
// the default margins, 0.15 for the ideal network (whose alpha-beta tiers the closed form shares)
// and 0.25 for SimGrid (which adds congestion), that is further out than any r measured. Every
// search reports the range of r among the plans it simulated and warns when the spread exceeds
// 1 + margin (then rerun with the larger --margin it suggests); the brute-force test checks the
// whole pipeline on a case where every plan is simulated.
//
// The refinement (step 4) is safe by the same argument for q(p) = SimGrid / ideal-network time,
// which differs between plans only by congestion: with the SimGrid margin of step 3 every plan
// the closed form could not rule out is ranked on the ideal network, and a plan pruned in step 4
// beats the K-th only if its q is below that plan's by more than refine_margin (default 0.10).
// Every search with refinement reports the range of q and warns when its spread exceeds
// 1 + refine_margin.
#ifndef TRAINSIM_SIM_SEARCH_SEARCH_H_
#define TRAINSIM_SIM_SEARCH_SEARCH_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/config/scenario.h"
#include "sim/engine/scenario_run.h"
#include "sim/search/plan_space.h"

namespace trainsim::search {

enum class Objective {
  kTime,             // shortest iteration
  kTokensPerDollar,  // most tokens per US dollar (needs the profile's cost.price_per_gpu_hour)
};

// Relative margin over the K-th fitting plan's closed-form time within which plans are still
// simulated, by network model (see above).
inline constexpr double kDefaultMarginIdeal = 0.15;
inline constexpr double kDefaultMarginSimgrid = 0.25;
double default_margin(engine::NetworkModel network);
// Relative margin over the K-th plan's ideal-network time within which plans are simulated on
// SimGrid (the refinement, see above).
inline constexpr double kDefaultRefineMargin = 0.10;

struct SearchOptions {
  int64_t gpus = 0;
  Objective objective = Objective::kTime;
  int top = 5;   // K
  int jobs = 1;  // forked children at once (screening and simulation)
  engine::NetworkModel network = engine::NetworkModel::kSimgrid;
  double margin = kDefaultMarginSimgrid;        // default_margin(network)
  double refine_margin = kDefaultRefineMargin;  // SimGrid only
  PlanPins pins;                                // values the plans are held to (plan_space.h)
  std::string command_line;                     // for the run reports' provenance
};

// Plans rejected for one reason.
struct RuleCount {
  std::string rule;  // the plan rule's id (config/plan_rules.h)
  int64_t plans = 0;
  std::string example;       // the rule's message for the first such plan
  std::string example_plan;  // that plan, described
};

struct SimulatedPlan {
  size_t index = 0;  // in the plan space
  PlanChoice plan;
  double memory_bound_bytes = 0;
  double closed_form_s = 0;  // closed-form iteration time
  double ranking_s = 0;      // step 3's ideal-network iteration time (extrapolated for large m)
  double refined_s = 0;      // step 4's SimGrid iteration time, extrapolated as step 3's (SimGrid searches)
  std::vector<std::string> overrides;  // the `--set` arguments that turn the scenario into this plan
  nlohmann::json run;                  // the `trainsim run --format json` report of step 4's full run
  std::string scenario_yaml;           // the plan as a scenario file (saved next to the base scenario)
  double objective_value = 0;          // seconds (time) or tokens per dollar
};

struct SimulationFailure {
  size_t index = 0;
  PlanChoice plan;
  std::string error;
};

// The range of a positive ratio over a set of plans and its spread max / min (1 for fewer than two).
struct RatioRange {
  double min = 0;
  double max = 0;
  double spread = 1;
  // Widens the range to `ratio`.
  void add(double ratio);
};

struct SearchResult {
  std::string scenario;      // its name
  bool moe = false;          // its model has experts (the ep and etp columns mean something)
  std::string command_line;  // as typed
  int64_t gpus = 0;
  Objective objective = Objective::kTime;
  int top = 0;
  double margin = 0;
  std::string network;
  std::optional<double> price_per_gpu_hour_usd;
  std::string pins;  // PlanPins::describe() of the search's pins; "" when the space is whole

  int64_t enumerated = 0;
  std::vector<RuleCount> invalid;  // by rule, most plans first
  int64_t duplicates = 0;          // the same plan as another one (selective recompute, fused attention)
  int64_t over_memory_bound = 0;   // memory lower bound above the HBM capacity
  int64_t kernel_time_bound = 0;   // never estimated: kernel-time lower bound above every limit
  int64_t slower_bound = 0;        // pruned by the closed-form time bound
  int64_t simulated = 0;           // every plan simulated in step 3, whatever the outcome
  int64_t simulated_over_memory = 0;
  std::vector<SimulationFailure> failures;
  std::vector<SimulatedPlan> best;  // the best `top`, best first

  // Simulated (step 3) / closed-form time over the simulated plans that fit.
  RatioRange closed_form;
  // The plans simulated in full for their reports (step 4), and their full / extrapolated time (the
  // refined time on SimGrid, step 3's on the ideal network; 1 up to rounding: the extrapolation is
  // exact).
  int64_t reported = 0;
  RatioRange extrapolation;
  // The refinement (SimGrid only; refined 0 otherwise): plans simulated on SimGrid at step 3's counts,
  // and their SimGrid / ideal-network time.
  double refine_margin = 0;
  int64_t refined = 0;
  RatioRange refine;
  int64_t ranked = 0;  // plans of the last step that fit, ranked by the objective
  double screening_wall_s = 0;
  double simulation_wall_s = 0;  // steps 3 and 4
  double wall_s = 0;

  int64_t invalid_plans() const;
  // Plans that fit after the simulations of step 3 (less the failures of every step).
  int64_t feasible() const;
};

// Searches `base` (a loaded scenario; its own plan is ignored) on `options.gpus` GPUs. Throws
// config::ConfigError when the objective needs a price the profile lacks or when the cluster has
// fewer GPUs; std::invalid_argument for options out of range and for pins no plan of the space
// meets. Progress goes to the log.
SearchResult run_search(const config::Scenario& base, const SearchOptions& options);

}  // namespace trainsim::search

#endif  // TRAINSIM_SIM_SEARCH_SEARCH_H_
