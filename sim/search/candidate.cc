#include "sim/search/candidate.h"

#include <memory>
#include <regex>

#include <yaml-cpp/yaml.h>

#include "sim/config/decode.h"
#include "sim/config/emit.h"

namespace trainsim::search {

std::string rule_of(const std::string& message) {
  static const std::regex kNumber("[0-9]+(\\.[0-9]+)?(Ki|Mi|Gi)?");
  return std::regex_replace(message.substr(0, message.find(';')), kNumber, "N");
}

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

CandidateCheck CandidateBuilder::check(const PlanChoice& choice, int64_t gpus) const {
  const auto source = std::make_shared<const config::Source>(
      config::Source{"search candidate " + choice.describe(), base_.path.parent_path(), 0});
  config::Diagnostics diagnostics;
  const config::Node root({{YAML::Load(yaml(choice, gpus)), source}}, "", &diagnostics,
                          config::Location{source->name, 1, 1});
  CandidateCheck out;
  config::Scenario s;
  config::internal::decode_scenario(
      root, s,
      [this](const config::Node&, const config::Node&, const std::filesystem::path&,
             config::Topology& topology) {
        topology = base_.cluster.topology;
        return true;
      },
      [this](const config::Node&, const config::Node&, const std::filesystem::path&,
             config::HardwareProfile& hardware) {
        hardware = base_.cluster.hardware;
        return true;
      });
  try {
    diagnostics.throw_if_any();
  } catch (const config::ConfigError& e) {
    const config::Diagnostic& first = e.diagnostics().front();
    const std::string message = first.path.empty() ? first.message : first.path + ": " + first.message;
    out.rejection = {rule_of(message), message};
    return out;
  }
  s.path = base_.path;
  s.content_hash = base_.content_hash;
  out.scenario = std::move(s);
  return out;
}

}  // namespace trainsim::search
