// Judging simulated values against published ones: relative errors, tolerance checks, the error
// statistics of a suite, and the CI gate.
#ifndef TRAINSIM_SIM_VALIDATE_STATISTICS_H_
#define TRAINSIM_SIM_VALIDATE_STATISTICS_H_

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "sim/validate/case.h"

namespace trainsim::validate {

// (simulated - published) / published: positive when the simulator overestimates the metric.
double relative_error(double simulated, double published);

// Whether `simulated` satisfies the case: within the tolerance of the published value (equal), or
// not below (at_least) / above (at_most) it by more than the tolerance.
bool within_tolerance(const Case& c, double simulated);

// Whether a case enters its suite's error statistics and gate: a measured value (comparison equal)
// whose transcription is not unconfirmed. Bounds and unconfirmed cases are reported case by case.
bool is_scored(const Case& c);

// The q-quantile (0 <= q <= 1) of `values`, interpolating linearly between the closest ranks (the
// default of numpy.percentile): q = 0.5 is the median. 0 for no values.
double quantile(std::vector<double> values, double q);

struct ErrorSummary {
  size_t cases = 0;  // values summarised
  double median_abs_error = 0;
  double p90_abs_error = 0;
  double max_abs_error = 0;
};

// Median, 90th percentile and maximum of absolute relative errors.
ErrorSummary summarize_errors(const std::vector<double>& abs_errors);

// A scored case as the gate sees it: its absolute relative error, or the reason it has none.
struct GatedCase {
  std::string id;
  std::optional<double> abs_error;
  std::string error;  // why there is no value (the case failed to run)
};

// The gate's violations for one suite, one sentence each naming the suite (and the case): the median
// absolute error above gate.median_abs_error, each case above gate.max_abs_error, each case without
// a value, and a suite with no scored case at all. Empty when the gate holds.
std::vector<std::string> gate_violations(const std::string& suite, const Gate& gate,
                                         const std::vector<GatedCase>& cases);

}  // namespace trainsim::validate

#endif  // TRAINSIM_SIM_VALIDATE_STATISTICS_H_
