#include "sim/search/candidate.h"

#include "sim/config/emit.h"
#include "sim/config/plan_rules.h"

namespace trainsim::search {

CandidateBuilder::CandidateBuilder(const config::Scenario& base) : base_(base) {}

std::string CandidateBuilder::yaml(const PlanChoice& choice, int64_t gpus) const {
  config::Scenario s;  // what to_yaml reads, without copying the topology and profile
  s.path = base_.path;
  s.name = base_.name;
  s.description = base_.description;
  s.framework = base_.framework;
  s.model = base_.model;
  s.training = base_.training;
  s.parallelism = base_.parallelism;
  s.stragglers = base_.stragglers;
  s.campaign = base_.campaign;
  s.cluster.topology_path = base_.cluster.topology_path;
  s.cluster.hardware_path = base_.cluster.hardware_path;
  s.cluster.topology.what_if = base_.cluster.topology.what_if;  // written as topology_set, hardware_set
  s.cluster.hardware.what_if = base_.cluster.hardware.what_if;
  s.cluster.price_per_gpu_hour_usd = base_.cluster.price_per_gpu_hour_usd;
  s.cluster.facility = base_.cluster.facility;
  choice.apply(gpus, s);
  return config::to_yaml(s, config::Defaults::kAsGiven);
}

config::Scenario CandidateBuilder::scenario(const PlanChoice& choice, int64_t gpus) const {
  config::Scenario s = base_;
  choice.apply(gpus, s);
  return s;
}

CandidateCheck CandidateBuilder::check(const PlanChoice& choice, int64_t gpus) const {
  config::Scenario s = scenario(choice, gpus);
  if (std::optional<config::PlanViolation> broken = config::first_plan_violation(s)) {
    return {std::nullopt, {std::string(broken->rule), broken->text()}};
  }
  return {std::move(s), {}};
}

}  // namespace trainsim::search
