// Step 2 of `trainsim search` (search.h): screening the plan space before anything is simulated.
//
// 2a. Every plan, in forked children: the plan rules (config/plan_rules.h; each plan with its own
//     ZeRO stage and recompute mode), then duplicates (selective recompute under a fused attention
//     kernel keeps and recomputes exactly what recompute none does: counted, not simulated), then the
//     memory lower bound (analytic/memory_bound.h) against the usable HBM, then the kernel-time lower
//     bound (estimate::iteration_lower_bound_s: two small graphs per stage). What passes is a
//     candidate.
// 2b. The closed-form iteration time (estimate/iteration_time.h), the costly part, in order of the
//     lower bound, round by round, until the next candidate's lower bound exceeds (1 + margin) x the
//     closed-form time of the K-th candidate whose estimate fits in memory: step 3 never simulates a
//     plan whose closed form exceeds (1 + margin) x that of its K-th fitting plan, and a closed form
//     is never below its lower bound, so those candidates wait. Should step 3's limit end above the
//     wait line (its K-th fitting plan has a longer closed form than the estimate's K-th), step 3
//     estimates the waiting candidates below its limit (estimate_up_to) and walks again: the result
//     is the one of estimating every candidate. On Llama-3 70B over 256 H100s the lower bound leaves
//     about a third of the candidates to estimate.
#ifndef TRAINSIM_SIM_SEARCH_SCREENING_H_
#define TRAINSIM_SIM_SEARCH_SCREENING_H_

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "sim/search/candidate.h"
#include "sim/search/plan_space.h"
#include "sim/search/search.h"

namespace trainsim::search {

// Tasks per job (screening chunks, batches of simulations): enough to balance uneven ones and to
// report progress.
inline constexpr size_t kChunksPerJob = 16;
// Seconds between progress lines of a long step.
inline constexpr double kProgressInterval_s = 10;

// Seconds since `start` on the steady clock.
double seconds_since(std::chrono::steady_clock::time_point start);

// A plan that passed the rules and the memory bound, with the lower bound of its iteration time.
struct Candidate {
  size_t index = 0;  // in the plan space
  double memory_bound_bytes = 0;
  double lower_bound_s = 0;
};

// A candidate with its closed-form iteration time, and whether the estimate's memory peaks fit.
struct Survivor {
  size_t index = 0;
  double memory_bound_bytes = 0;
  double closed_form_s = 0;
  bool fits = true;
};

// What screening found, merged over chunks.
struct Screening {
  std::map<std::string, RuleCount> invalid;
  std::map<std::string, size_t> invalid_first_index;  // of each rule's example
  int64_t over_memory = 0;
  int64_t duplicates = 0;
  std::vector<Candidate> candidates;  // by lower bound (then index)
  size_t estimated = 0;               // candidates[0, estimated) are among the survivors
  std::vector<Survivor> survivors;    // by closed-form time (then index)

  void add_invalid(const std::string& rule, int64_t plans, const std::string& message, size_t index,
                   const std::string& plan);
  // Candidates never estimated: their lower bound is above every limit the search used.
  int64_t waiting() const { return static_cast<int64_t>(candidates.size() - estimated); }
};

// Step 2a over the whole space, with `jobs` children at once.
Screening screen(const CandidateBuilder& builder, const PlanSpace& space, int jobs);

// Step 2b: estimates candidates in lower-bound order until the next one's lower bound exceeds
// (1 + margin) x the closed form of the `top`-th estimated candidate that fits (every candidate while
// fewer than `top` fit).
void estimate_in_order(const CandidateBuilder& builder, const PlanSpace& space, int jobs, int top,
                       double margin, Screening& screening);

// Estimates every candidate not yet estimated whose lower bound is at most `limit_s`.
void estimate_up_to(const CandidateBuilder& builder, const PlanSpace& space, int jobs, double limit_s,
                    Screening& screening);

}  // namespace trainsim::search

#endif  // TRAINSIM_SIM_SEARCH_SCREENING_H_
