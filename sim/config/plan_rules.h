// The cross-field rules of a parallel plan, each written once: the degrees against the model, the
// batch, the cluster and each other, what the framework runs, and what the workload can express.
// The scenario decoder reports each broken rule at the file position of the key it blames; the
// workload (workload::make_plan) refuses a plan that breaks one; search checks its candidates with
// them directly and groups the plans it rejects by rule id.
#ifndef TRAINSIM_SIM_CONFIG_PLAN_RULES_H_
#define TRAINSIM_SIM_CONFIG_PLAN_RULES_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/config/scenario.h"

namespace trainsim::config {

// The sections of a scenario a rule reads, as bits. The decoder checks a rule only when every section
// it reads decoded cleanly, so that one mistake is not reported again as a broken rule.
enum ScenarioSection : unsigned {
  kModelSection = 1u << 0,
  kTrainingSection = 1u << 1,
  kParallelismSection = 1u << 2,
  kClusterGpus = 1u << 3,   // cluster.gpus, and parallelism.dp when it is derived from it
  kClusterFiles = 1u << 4,  // the topology and the hardware profile
  kStragglersSection = 1u << 5,
  kEverySection = (1u << 6) - 1,
};

// How a scenario breaks a rule: the message (what is wrong and what to change), and the key to point
// at when it is not the rule's first (an element such as "stragglers.slow_gpus[0].ranks[1]").
struct Breach {
  Breach(std::string message_text, std::string key_path = {})  // NOLINT: rules return their message
      : message(std::move(message_text)), key(std::move(key_path)) {}
  std::string message;
  std::string key;
};

// One rule. `keys` are the scenario keys it blames, the one to change first (where messages point)
// first; `reads` the ScenarioSection bits it needs; `check` returns how `scenario` breaks it, or
// nothing when it holds. When a rule that `stops` breaks, the rules after it are not checked (they
// assume it: degrees of at least 1 before any rule divides by one).
struct PlanRule {
  std::string_view id;  // stable and unique, e.g. "tp-divides-heads"
  std::vector<std::string_view> keys;
  unsigned reads = kEverySection;
  std::optional<Breach> (*check)(const Scenario& scenario) = nullptr;
  bool stops = false;
};

// A broken rule: its id, the key its message points at, and the message.
struct PlanViolation {
  std::string_view rule;
  std::string key;
  std::string message;

  // "key: message", as errors print it.
  std::string text() const { return key + ": " + message; }
};

// Every rule, in the order the decoder reports them.
const std::vector<PlanRule>& plan_rules();

// The rules `scenario` breaks among those that read only the sections in `decoded`, in table order.
std::vector<PlanViolation> plan_violations(const Scenario& scenario, unsigned decoded = kEverySection);

// The first rule `scenario` breaks among those that read only the sections in `decoded`, if any.
std::optional<PlanViolation> first_plan_violation(const Scenario& scenario, unsigned decoded = kEverySection);

}  // namespace trainsim::config

#endif  // TRAINSIM_SIM_CONFIG_PLAN_RULES_H_
