// The two error channels of sim/workload: PlanError for plans that break a rule of the plan (a
// user-level problem, with the rule and the scenario key to change), and TRAINSIM_WORKLOAD_CHECK for
// internal invariants (a bug: prints the failed condition with context and aborts).
#ifndef TRAINSIM_SIM_WORKLOAD_ERRORS_H_
#define TRAINSIM_SIM_WORKLOAD_ERRORS_H_

#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>

#include "sim/config/plan_rules.h"

namespace trainsim::workload {

// A scenario whose parallel plan breaks a rule of config/plan_rules.h, e.g. heads not divisible by
// the tensor-parallel degree. `rule()` is the rule's id, `setting()` the dotted scenario key to change,
// `message()` what is wrong and what would work; `what()` is "setting: message".
class PlanError : public std::runtime_error {
 public:
  explicit PlanError(config::PlanViolation violation);
  std::string_view rule() const { return violation_.rule; }
  const std::string& setting() const { return violation_.key; }
  const std::string& message() const { return violation_.message; }

 private:
  config::PlanViolation violation_;
};

namespace internal {

// Collects the context of a failed invariant; its destructor prints "file:line: check failed:
// condition: context" to stderr and aborts. Only TRAINSIM_WORKLOAD_CHECK creates it.
class CheckFailure {
 public:
  CheckFailure(const char* file, int line, const char* condition);
  CheckFailure(const CheckFailure&) = delete;
  CheckFailure& operator=(const CheckFailure&) = delete;
  ~CheckFailure();
  std::ostream& stream() { return stream_; }

 private:
  std::ostringstream stream_;
};

}  // namespace internal
}  // namespace trainsim::workload

// Aborts with context when `condition` is false: TRAINSIM_WORKLOAD_CHECK(x > 0) << "x = " << x;
#define TRAINSIM_WORKLOAD_CHECK(condition) \
  if (condition) {                         \
  } else                                   \
    ::trainsim::workload::internal::CheckFailure(__FILE__, __LINE__, #condition).stream()

#endif  // TRAINSIM_SIM_WORKLOAD_ERRORS_H_
