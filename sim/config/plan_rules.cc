#include "sim/config/plan_rules.h"

#include "sim/config/plan_rules_groups.h"

namespace trainsim::config {

const std::vector<PlanRule>& plan_rules() {
  static const std::vector<PlanRule> kRules = [] {
    std::vector<PlanRule> rules;
    internal::add_layout_rules(rules);
    internal::add_zero_rules(rules);
    internal::add_sequence_rules(rules);
    internal::add_expert_rules(rules);
    internal::add_cluster_rules(rules);
    return rules;
  }();
  return kRules;
}

namespace {

// Calls `found(violation)` for each rule among those reading only `decoded` that `scenario` breaks, in
// table order, until it returns false.
template <class Found>
void find_violations(const Scenario& scenario, unsigned decoded, const Found& found) {
  for (const PlanRule& rule : plan_rules()) {
    if ((rule.reads & decoded) != rule.reads) continue;
    std::optional<Breach> breach = rule.check(scenario);
    if (!breach) continue;
    std::string key = breach->key.empty() ? std::string(rule.keys.front()) : std::move(breach->key);
    if (!found(PlanViolation{rule.id, std::move(key), std::move(breach->message)}) || rule.stops) return;
  }
}

}  // namespace

std::vector<PlanViolation> plan_violations(const Scenario& scenario, unsigned decoded) {
  std::vector<PlanViolation> out;
  find_violations(scenario, decoded, [&](PlanViolation v) {
    out.push_back(std::move(v));
    return true;
  });
  return out;
}

std::optional<PlanViolation> first_plan_violation(const Scenario& scenario, unsigned decoded) {
  std::optional<PlanViolation> first;
  find_violations(scenario, decoded, [&](PlanViolation v) {
    first = std::move(v);
    return false;
  });
  return first;
}

}  // namespace trainsim::config
