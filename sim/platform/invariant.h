// Invariant checks for sim/platform and sim/cost: a failed check is a bug, not a user error, so it
// prints where and why to stderr and aborts (user errors are exceptions; see sim/config/diagnostics.h).
#ifndef TRAINSIM_SIM_PLATFORM_INVARIANT_H_
#define TRAINSIM_SIM_PLATFORM_INVARIANT_H_

#include <string>

#include <fmt/format.h>

namespace trainsim::platform::internal {

[[noreturn]] void invariant_failed(const char* file, int line, const char* condition,
                                   const std::string& context);

}  // namespace trainsim::platform::internal

// TRAINSIM_PLATFORM_CHECK(condition, "format {}", args...): aborts with the formatted context when false.
#define TRAINSIM_PLATFORM_CHECK(condition, ...)                                        \
  do {                                                                                 \
    if (!(condition)) {                                                                \
      ::trainsim::platform::internal::invariant_failed(__FILE__, __LINE__, #condition, \
                                                       fmt::format(__VA_ARGS__));      \
    }                                                                                  \
  } while (false)

#endif  // TRAINSIM_SIM_PLATFORM_INVARIANT_H_
