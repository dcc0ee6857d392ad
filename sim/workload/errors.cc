#include "sim/workload/errors.h"

#include <cstdlib>
#include <iostream>

namespace trainsim::workload {

PlanError::PlanError(config::PlanViolation violation)
    : std::runtime_error(violation.text()), violation_(std::move(violation)) {}

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
