// Scenario keys set from inside another input file (a sweep's axes and `set`, a cluster file's
// jobs), checked like --set and located where that file writes them.
#ifndef TRAINSIM_SIM_CONFIG_SETTINGS_H_
#define TRAINSIM_SIM_CONFIG_SETTINGS_H_

#include <filesystem>
#include <string>
#include <vector>

#include "sim/config/diagnostics.h"
#include "sim/config/scenario.h"

namespace trainsim::config {

// A dotted scenario key and its value (YAML text), and where it was written.
struct Setting {
  std::string key;
  std::string value;
  Location location;
};

// The scenario `base` with `settings` on top, as if each were given with --set (and checked the same
// way); relative paths in the values of cluster.topology and cluster.hardware resolve against `dir`.
// A problem caused by a setting is located at it (a rule across keys at the setting of one of its
// keys, else at the first setting; `referrer` when there is none), a problem of the base file in that
// file. Throws ConfigError.
Scenario load_scenario_with(const std::filesystem::path& base, const std::vector<Setting>& settings,
                            const std::filesystem::path& dir, const std::string& referrer);

}  // namespace trainsim::config

#endif  // TRAINSIM_SIM_CONFIG_SETTINGS_H_
