#include "sim/report/inputs.h"

#include <optional>

#include <fmt/format.h>

namespace trainsim::report {
namespace {

using nlohmann::json;

json file_input(const std::string& name, const std::string& hash,
                const std::vector<config::WhatIf>& what_if) {
  json out = {{"name", name}, {"hash", hash}};
  if (what_if.empty()) return out;
  json list = json::array();
  for (const config::WhatIf& w : what_if) {
    // A --set names itself in full in the command line the provenance holds.
    const bool command_line = w.where.file.rfind("--set ", 0) == 0;
    list.push_back(
        {{"key", w.key},
         {"value", w.value},
         {"where", command_line ? std::string("--set")
                                : fmt::format("{}:{}:{}", w.where.file, w.where.line, w.where.column)}});
  }
  out["what_if"] = list;
  return out;
}

}  // namespace

json topology_input(const config::Topology& topology) {
  return file_input(topology.name, topology.content_hash, topology.what_if);
}

json hardware_input(const config::HardwareProfile& hardware) {
  json out = file_input(hardware.name, hardware.content_hash, hardware.what_if);
  if (const std::optional<config::StackProfile>& stack = hardware.stack) {
    json parameters = json::object();
    for (const config::StackParameterInfo& info : config::stack_parameter_table()) {
      if (stack->parameters[info.id] != info.neutral)
        parameters[std::string(info.name)] = stack->parameters[info.id];
    }
    out["stack"] = {
        {"framework", stack->framework}, {"hardware", stack->hardware_name}, {"parameters", parameters}};
  }
  return out;
}

std::string render_inputs(const json& inputs) {
  const json& hardware = inputs.at("hardware");
  std::string profile = fmt::format("hardware profile {}", hardware.at("name").get<std::string>());
  if (hardware.contains("stack")) {
    const json& stack = hardware.at("stack");
    profile =
        fmt::format("stack profile {} ({}) on hardware profile {}", hardware.at("name").get<std::string>(),
                    stack.at("framework").get<std::string>(), stack.at("hardware").get<std::string>());
  }
  return fmt::format("# on topology {}, {}\n", inputs.at("topology").at("name").get<std::string>(), profile);
}

json scenario_inputs(const config::Scenario& s) {
  return {{"scenario", {{"path", s.path.filename().string()}, {"hash", s.content_hash}}},
          {"topology", topology_input(s.cluster.topology)},
          {"hardware", hardware_input(s.cluster.hardware)}};
}

std::string render_what_if(const json& inputs) {
  std::string out;
  for (const char* file : {"topology", "hardware"}) {
    if (!inputs.contains(file) || !inputs.at(file).contains("what_if")) continue;
    const json& input = inputs.at(file);
    for (const json& w : input.at("what_if")) {
      out += fmt::format("- {} {}: {} = {} ({})\n", file, input.at("name").get<std::string>(),
                         w.at("key").get<std::string>(), w.at("value").get<std::string>(),
                         w.at("where").get<std::string>());
    }
  }
  return out.empty() ? out : "\n# what-if: values set over the input files\n" + out;
}

}  // namespace trainsim::report
