// Turning a point of the plan space into a scenario, checked by the scenario decoder itself: the
// candidate is the base scenario with the plan's keys set, written out as its resolved YAML
// (config/emit.h) and decoded again by the entry point the loader uses (config/decode.h), so every
// cross-field rule `trainsim run` applies is applied here and none is repeated. The base scenario's
// topology and hardware profile are handed to the decoder as already loaded, so checking a plan
// costs a decode of one small document, not three file reads. Rules of the workload
// (workload::PlanError) are met later, when the plan's memory bound is computed.
#ifndef TRAINSIM_SIM_SEARCH_CANDIDATE_H_
#define TRAINSIM_SIM_SEARCH_CANDIDATE_H_

#include <optional>
#include <string>

#include "sim/config/scenario.h"
#include "sim/search/plan_space.h"

namespace trainsim::search {

// Why a plan is invalid: `rule` groups plans rejected for the same reason (the decoder's message
// without its numbers and hints), `message` is one occurrence in full ("key: message").
struct Rejection {
  std::string rule;
  std::string message;
};

// The outcome of checking one plan: a complete scenario, or why not.
struct CandidateCheck {
  std::optional<config::Scenario> scenario;
  Rejection rejection;  // when `scenario` is empty
};

// `message` with every number (and count suffix such as Ki) replaced by N and everything from the
// first ';' (the hint) dropped: "tp N must divide the N attention heads".
std::string rule_of(const std::string& message);

class CandidateBuilder {
 public:
  // `base` is a loaded (valid) scenario; its model, training and cluster files are kept.
  explicit CandidateBuilder(const config::Scenario& base);

  // The scenario of `choice` on `gpus` GPUs, checked by the scenario decoder.
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
