#include "sim/workload/errors.h"

#include <cstdlib>
#include <iostream>

namespace trainsim::workload {

PlanError::PlanError(std::string setting, const std::string& message)
    : std::runtime_error(setting + ": " + message), setting_(std::move(setting)) {}

namespace internal {

CheckFailure::CheckFailure(const char* file, int line, const char* condition) {
  stream_ << file << ':' << line << ": check failed: " << condition << ": ";
}

CheckFailure::~CheckFailure() {
  std::cerr << stream_.str() << std::endl;
  std::abort();
}

}  // namespace internal
}  // namespace trainsim::workload
