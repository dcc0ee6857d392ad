#include "sim/common/version.h"

#include <xbt/base.h>

#include <fmt/format.h>
#include <simgrid/version.h>  // after base.h, which it needs

#include "trainsim_git_sha.h"

namespace trainsim {

std::string version() { return TRAINSIM_VERSION; }

std::string git_sha() { return TRAINSIM_GIT_SHA; }

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

}  // namespace trainsim
