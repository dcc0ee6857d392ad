// What this build of trainsim is: its version, git sha and the SimGrid it runs on. Every output
// carries these in its provenance block.
#ifndef TRAINSIM_SIM_COMMON_VERSION_H_
#define TRAINSIM_SIM_COMMON_VERSION_H_

#include <string>

#include <nlohmann/json.hpp>

namespace trainsim {

// Semantic version of trainsim, e.g. "0.1.0".
std::string version();
// Short git sha of the source tree at build time ("-dirty" appended for uncommitted changes),
// "unknown" outside a git checkout.
std::string git_sha();
// The SimGrid library version linked at run time, e.g. "3.32.0".
std::string simgrid_version();

// The provenance block of a JSON output: tool, version, git_sha, simgrid_version and the command
// line as typed; outputs add their inputs and options.
nlohmann::json provenance(const std::string& command_line);

}  // namespace trainsim

#endif  // TRAINSIM_SIM_COMMON_VERSION_H_
