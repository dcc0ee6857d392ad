// Loading the scenario of a validation case: the named scenario file with the case's `set` merged on
// top, through the ordinary scenario loader (so every scenario rule applies), with errors in the
// `set` located in the case file where it was written.
#ifndef TRAINSIM_SIM_VALIDATE_CASE_SCENARIO_H_
#define TRAINSIM_SIM_VALIDATE_CASE_SCENARIO_H_

#include <filesystem>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "sim/config/loader.h"
#include "sim/config/scenario.h"
#include "sim/validate/case.h"

namespace trainsim::validate {

// Copies `src` over `dst` (both maps of scenario keys): maps merge, everything else replaces. Values
// are cloned, so `dst` shares no node with `src`.
void merge_into(YAML::Node dst, const YAML::Node& src);

// Adds a command-line override ("parallelism.tp=4") to `tree` (a map). Throws config::ConfigError,
// located at the override, when its value is not YAML.
void merge_override(YAML::Node tree, const config::Override& override);

// Loads the scenario `file` with `set` (a map of scenario sections; undefined for none) on top,
// passed to the scenario loader as one `--set section={...}` per section, and `after` (command-line
// overrides) over that, so that every scenario rule applies to the result. Throws
// config::ConfigError.
config::Scenario load_scenario_with(const std::filesystem::path& file, const YAML::Node& set,
                                    const std::vector<config::Override>& after = {});

// Loads `ref` with `extra` (a map of scenario sections, e.g. {model: {seq_len: 262144}}, undefined
// for none) merged over the case's set, and `overrides` (as typed on a command line) over both.
// Throws config::ConfigError; one of its diagnostics then names the case's `scenario` (or
// `baseline`) key, so a problem found in the shared scenario file is traced back to the case that
// uses it, and a problem with an override stays located at the override.
config::Scenario load_case_scenario(const ScenarioRef& ref, const YAML::Node& extra = YAML::Node(),
                                    const std::vector<config::Override>& overrides = {});

}  // namespace trainsim::validate

#endif  // TRAINSIM_SIM_VALIDATE_CASE_SCENARIO_H_
