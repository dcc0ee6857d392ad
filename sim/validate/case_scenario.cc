#include "sim/validate/case_scenario.h"

#include <algorithm>
#include <sstream>

#include <fmt/format.h>

namespace trainsim::validate {
namespace {

using config::Diagnostic;
using config::Layer;
using config::Location;

std::string flow(const YAML::Node& node) {
  YAML::Emitter out;
  out << YAML::Flow << node;
  return out.c_str();
}

// Where `path` (a dotted scenario key) was written in the case's set layers; `fallback` when it was
// not written there.
Location locate(const std::vector<Layer>& set, const std::string& path, const Location& fallback) {
  config::Diagnostics scratch;
  config::Node node(set, "", &scratch, fallback);
  Location found = fallback;
  std::stringstream parts(path);
  for (std::string key; std::getline(parts, key, '.');) {
    const size_t bracket = key.find('[');
    if (bracket != std::string::npos) key.resize(bracket);
    config::MapReader reader(node);
    node = reader.child(key);
    if (!node.defined()) break;
    found = node.location();
  }
  return found;
}

}  // namespace

void merge_into(YAML::Node dst, const YAML::Node& src) {
  for (auto it = src.begin(); it != src.end(); ++it) {
    const std::string key = it->first.Scalar();
    if (it->second.IsMap() && dst[key].IsMap()) {
      merge_into(dst[key], it->second);
    } else {
      dst[key] = YAML::Clone(it->second);
    }
  }
}

void merge_override(YAML::Node tree, const config::Override& override) {
  YAML::Node value;
  try {
    value = YAML::Load(override.value);
  } catch (const YAML::Exception& e) {
    config::throw_config_error({fmt::format("--set {}", override.text), 1, 1}, override.key,
                               fmt::format("invalid value: {}", e.msg));
  }
  YAML::Node branch = value;
  std::vector<std::string> keys;
  std::stringstream parts(override.key);
  for (std::string key; std::getline(parts, key, '.');) keys.push_back(key);
  for (auto key = keys.rbegin(); key != keys.rend(); ++key) {
    YAML::Node parent(YAML::NodeType::Map);
    parent[*key] = branch;
    branch.reset(parent);
  }
  merge_into(tree, branch);
}

config::Scenario load_scenario_with(const std::filesystem::path& file, const YAML::Node& set,
                                    const std::vector<config::Override>& after) {
  std::vector<config::Override> overrides;
  for (auto it = set.begin(); set.IsMap() && it != set.end(); ++it) {
    const std::string key = it->first.Scalar();
    const std::string value = flow(it->second);
    overrides.push_back({key + "=" + value, key, value});
  }
  overrides.insert(overrides.end(), after.begin(), after.end());
  return config::load_scenario(file, overrides);
}

config::Scenario load_case_scenario(const ScenarioRef& ref, const YAML::Node& extra,
                                    const std::vector<config::Override>& overrides) {
  YAML::Node merged(YAML::NodeType::Map);
  for (auto layer = ref.set.rbegin(); layer != ref.set.rend(); ++layer) {
    if (layer->node.IsMap()) merge_into(merged, layer->node);
  }
  if (extra.IsMap()) merge_into(merged, extra);
  try {
    return load_scenario_with(ref.file, merged, overrides);
  } catch (const config::ConfigError& e) {
    const auto typed = [&](const std::string& file) {
      return std::any_of(overrides.begin(), overrides.end(),
                         [&](const config::Override& o) { return file == fmt::format("--set {}", o.text); });
    };
    std::vector<Diagnostic> diagnostics;
    for (Diagnostic d : e.diagnostics()) {
      if (d.location.file.rfind("--set ", 0) == 0 && !typed(d.location.file)) {
        d.location = locate(ref.set, d.path, ref.location);
      }
      diagnostics.push_back(std::move(d));
    }
    diagnostics.push_back(
        {ref.location, "",
         fmt::format("the scenario of this case ({} with the case's set) does not load; see above",
                     ref.file.filename().string())});
    throw config::ConfigError(std::move(diagnostics));
  }
}

}  // namespace trainsim::validate
