// What this build of trainsim is: its version and git sha (sim/engine/provenance.h adds the SimGrid
// it runs on for the simulator's outputs).
#ifndef TRAINSIM_SIM_COMMON_VERSION_H_
#define TRAINSIM_SIM_COMMON_VERSION_H_

#include <string>

namespace trainsim {

// Semantic version of trainsim, e.g. "0.1.0".
std::string version();
// Short git sha of the source tree at build time ("-dirty" appended for uncommitted changes),
// "unknown" outside a git checkout.
std::string git_sha();

}  // namespace trainsim

#endif  // TRAINSIM_SIM_COMMON_VERSION_H_
