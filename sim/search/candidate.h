// Turning a point of the plan space into a scenario: the base scenario with the plan's keys set,
// checked by the plan rules (config/plan_rules.h), the same rules the scenario decoder applies to
// `trainsim run`'s files and the workload to every plan. The base scenario's topology and hardware
// profile go with every candidate.
#ifndef TRAINSIM_SIM_SEARCH_CANDIDATE_H_
#define TRAINSIM_SIM_SEARCH_CANDIDATE_H_

#include <optional>
#include <string>

#include "sim/config/scenario.h"
#include "sim/search/plan_space.h"

namespace trainsim::search {

// Why a plan is invalid: the id of the plan rule it breaks (plans are grouped by it) and the rule's
// message for it in full ("key: message").
struct Rejection {
  std::string rule;
  std::string message;
};

// The outcome of checking one plan: a complete scenario, or why not.
struct CandidateCheck {
  std::optional<config::Scenario> scenario;
  Rejection rejection;  // when `scenario` is empty
};

class CandidateBuilder {
 public:
  // `base` is a loaded (valid) scenario; its model, training and cluster files are kept.
  explicit CandidateBuilder(const config::Scenario& base);

  // The scenario of `choice` on `gpus` GPUs, unchecked.
  config::Scenario scenario(const PlanChoice& choice, int64_t gpus) const;
  // The scenario of `choice` on `gpus` GPUs, checked by the plan rules.
  CandidateCheck check(const PlanChoice& choice, int64_t gpus) const;

  // The resolved YAML of `choice` on `gpus` GPUs: a scenario file that, saved next to the base
  // scenario, loads to the candidate.
  std::string yaml(const PlanChoice& choice, int64_t gpus) const;

  const config::Scenario& base() const { return base_; }

 private:
  config::Scenario base_;
};

}  // namespace trainsim::search

#endif  // TRAINSIM_SIM_SEARCH_CANDIDATE_H_
