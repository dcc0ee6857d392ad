// Fitting a stack profile (config/stack.h) on calibration cases and on profiled single-node runs:
// `trainsim calibrate fit-stack`.
// The parameters are found by bounded least squares on the cases' relative errors
// (least_squares.h), always from the neutral values, so the same inputs give the same profile
// byte for byte. Only calibration cases that run on the stack profile are fitted on (docs/DESIGN.md
// decision 8): validation cases found in a folder are left out and listed, a validation case named
// on its own is refused. A fit whose parameter ends on a bound, or that no case moves, is refused
// with the parameter named: the model lacks a mechanism, or the cases cannot tell.
#ifndef TRAINSIM_SIM_VALIDATE_STACK_FIT_H_
#define TRAINSIM_SIM_VALIDATE_STACK_FIT_H_

#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/config/hardware.h"
#include "sim/validate/case.h"
#include "sim/validate/least_squares.h"

namespace trainsim::validate {

// A fit that cannot be made or would not mean anything; what() says which and what to do.
class StackFitError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A training run on one node that its user profiled: the scenario that describes it (on the stack
// profile) and the PyTorch profiler trace of one of its ranks (measured/kineto_trace.h).
struct ProfiledRun {
  std::filesystem::path scenario;
  std::filesystem::path trace;
};

struct StackFitRequest {
  std::filesystem::path stack_file;  // the stack profile to refit
  // Case files or folders of cases, and profiled runs; both empty: those the profile's stack.fit
  // lists.
  std::vector<std::filesystem::path> inputs;
  std::vector<ProfiledRun> traces;
  // The parameters to fit, at most six; empty: those the profile's stack.fit lists.
  std::vector<config::StackParameter> parameters;
  int jobs = 1;             // cases simulated at once, each in its own process
  double time_limit_s = 0;  // per simulation; 0 = none
};

// One number a stack is fitted on: a calibration case's published value, or a profiled run's step
// time or GPU time of one kernel class (every class that takes at least 5 % of the measured step).
struct FitTarget {
  std::string id;              // the case's id, or "<trace file name>:<step|class>"
  std::filesystem::path file;  // the case file or the trace
  std::string metric;          // the case's metric, or step_time_s, gemm_time_s, attention_time_s, ...
  double published = 0;
};

struct StackFitResult {
  config::HardwareProfile profile;    // the stack profile as loaded (stack: the refitted one)
  std::vector<FitTarget> targets;     // fitted on, in the order of stack.fit.measurements
  std::vector<std::string> left_out;  // cases found but not fitted on, each with why
  Vector residuals_before;            // at the neutral parameters (the hardware profile alone)
  LeastSquaresResult solution;
};

// Fits `request`. Throws StackFitError (refusals), config::ConfigError (unreadable inputs).
StackFitResult fit_stack(const StackFitRequest& request);

// The stack profile file that records `result`: the original file's leading comments, extends,
// name, framework and description, the fitted parameters beside the unfitted ones it set, the fit
// record (command, measurements with residuals, uncertainty, sensitivity) and its sources.
std::string render_stack_profile(const StackFitRequest& request, const StackFitResult& result);

// The command that refits the profile with the inputs and parameters it records.
std::string refit_command(const StackFitRequest& request);

// What the fit found, for people: each parameter with its value, bounds, uncertainty and
// sensitivity, each measurement before and after, what was left out.
std::string render_fit_table(const StackFitRequest& request, const StackFitResult& result);

}  // namespace trainsim::validate

#endif  // TRAINSIM_SIM_VALIDATE_STACK_FIT_H_
