#include "sim/engine/provenance.h"

#include <xbt/base.h>

#include <fmt/format.h>
#include <simgrid/version.h>  // after base.h, which it needs

#include "sim/common/version.h"

namespace trainsim::engine {

std::string simgrid_version() {
  int major = 0;
  int minor = 0;
  int patch = 0;
  sg_version_get(&major, &minor, &patch);
  return fmt::format("{}.{}.{}", major, minor, patch);
}

nlohmann::json provenance(const std::string& command_line) {
  return {{"tool", "trainsim"},
          {"version", version()},
          {"git_sha", git_sha()},
          {"simgrid_version", simgrid_version()},
          {"command_line", command_line}};
}

}  // namespace trainsim::engine
