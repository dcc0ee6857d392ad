// The SimGrid the engine runs on, and the provenance block every simulator output carries.
#ifndef TRAINSIM_SIM_ENGINE_PROVENANCE_H_
#define TRAINSIM_SIM_ENGINE_PROVENANCE_H_

#include <string>

#include <nlohmann/json.hpp>

namespace trainsim::engine {

// The SimGrid library version linked at run time, e.g. "3.32.0".
std::string simgrid_version();

// The provenance block of a JSON output: tool, version, git_sha, simgrid_version and the command
// line as typed; outputs add their inputs and options.
nlohmann::json provenance(const std::string& command_line);

}  // namespace trainsim::engine

#endif  // TRAINSIM_SIM_ENGINE_PROVENANCE_H_
