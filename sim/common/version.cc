#include "sim/common/version.h"

#include "trainsim_git_sha.h"

namespace trainsim {

std::string version() { return TRAINSIM_VERSION; }

std::string git_sha() { return TRAINSIM_GIT_SHA; }

}  // namespace trainsim
