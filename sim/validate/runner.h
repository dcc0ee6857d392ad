// Running validation cases: each case is measured in its own forked child (SimGrid allows one
// simulation per process), a bounded number at a time.
#ifndef TRAINSIM_SIM_VALIDATE_RUNNER_H_
#define TRAINSIM_SIM_VALIDATE_RUNNER_H_

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "sim/validate/case.h"
#include "sim/validate/metrics.h"

namespace trainsim::validate {

struct CaseResult {
  bool ok = false;
  Measurement measurement;  // measure()'s result when ok, with the host time it took
  std::string error;        // otherwise: why the case produced no value
  // The same case on the hardware profile beneath its stack profile (RunnerOptions::hardware_only):
  // measure()'s result; none when not run, when the case names no stack profile, or when it produced
  // none (why: hardware_only_error).
  std::optional<Measurement> hardware_only;
  std::string hardware_only_error;
};

// The simulated value of a result, when it has a finite one.
std::optional<double> simulated_value(const CaseResult& r);

struct RunnerOptions {
  int jobs = 1;             // children at once, >= 1
  double time_limit_s = 0;  // per case; 0 = none
  // Also measure every case whose profile is a stack profile on the hardware profile beneath it.
  bool hardware_only = false;
  // The variant every case is measured as (metrics.h); default: as its files say.
  Variant variant{};
};

// Measures every case (metrics.h measure()) in a forked child and returns the results in case order.
// `progress` (if given) is called in the calling process as each case finishes, in completion order.
// A case that throws, crashes or overruns the time limit yields a result with its error.
std::vector<CaseResult> run_cases(const std::vector<Case>& cases, const RunnerOptions& options,
                                  const std::function<void(size_t, const CaseResult&)>& progress = {});

}  // namespace trainsim::validate

#endif  // TRAINSIM_SIM_VALIDATE_RUNNER_H_
