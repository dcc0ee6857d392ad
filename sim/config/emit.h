// Writing typed inputs back as YAML: the fully resolved form (presets expanded, defaults filled,
// quantities in canonical units) that `trainsim show` prints and that loads back to the same value.
#ifndef TRAINSIM_SIM_CONFIG_EMIT_H_
#define TRAINSIM_SIM_CONFIG_EMIT_H_

#include <string>

#include "sim/config/scenario.h"

namespace trainsim::config {

// What to write for the keys a framework supplies when the scenario leaves them out
// (Scenario::gradient_dtype and the accessors beside it): their values as comments marked
// "<framework> default" (what `show` prints), nothing, so that a changed plan loaded from the output
// takes the framework's default again (search candidates, sweep points), or their values as keys
// (what `diff` compares: every value the simulation uses).
enum class Defaults { kResolved, kAsGiven, kWritten };

// The scenario as a YAML document. File references are written relative to the scenario's
// directory, so the output can be saved next to it and loaded again.
std::string to_yaml(const Scenario& scenario, Defaults defaults = Defaults::kResolved);

}  // namespace trainsim::config

#endif  // TRAINSIM_SIM_CONFIG_EMIT_H_
