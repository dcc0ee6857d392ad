#include "sim/platform/invariant.h"

#include <cstdio>
#include <cstdlib>

namespace trainsim::platform::internal {

void invariant_failed(const char* file, int line, const char* condition, const std::string& context) {
  std::fprintf(stderr, "%s:%d: internal error: check failed: %s: %s\n", file, line, condition,
               context.c_str());
  std::abort();
}

}  // namespace trainsim::platform::internal
