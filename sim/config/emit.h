// Writing typed inputs back as YAML: the fully resolved form (presets expanded, defaults filled,
// quantities in canonical units) that `trainsim show` prints and that loads back to the same value.
#ifndef TRAINSIM_SIM_CONFIG_EMIT_H_
#define TRAINSIM_SIM_CONFIG_EMIT_H_

#include <string>

#include "sim/config/scenario.h"

namespace trainsim::config {

// The scenario as a YAML document. File references are written relative to the scenario's
// directory, so the output can be saved next to it and loaded again.
std::string to_yaml(const Scenario& scenario);

}  // namespace trainsim::config

#endif  // TRAINSIM_SIM_CONFIG_EMIT_H_
