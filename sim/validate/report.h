// The validation report: what a validation run found, typed (cases, per-suite statistics, errors by
// scale and regime, shape checks, the gate), with one JSON form and the table and CSV rendered from
// the same struct, so the three never disagree.
#ifndef TRAINSIM_SIM_VALIDATE_REPORT_H_
#define TRAINSIM_SIM_VALIDATE_REPORT_H_

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/validate/accuracy.h"
#include "sim/validate/case.h"
#include "sim/validate/measurement.h"
#include "sim/validate/runner.h"
#include "sim/validate/statistics.h"

namespace trainsim::validate {

struct ReportContext {
  std::string command_line;  // as typed, for provenance
  int jobs = 1;
  double wall_s = 0;  // host seconds the whole run took
  bool gate = false;  // whether the CI gate applies (its verdict is always reported)
};

// One case: its file's statement and what measuring it gave.
struct CaseOutcome {
  Case spec;
  Role role = Role::kValidation;           // its measurement's (validation when it failed before knowing)
  std::optional<Measurement> measurement;  // when it ran
  std::optional<double> simulated;         // the value compared with spec.published
  std::string error;                       // why there is no value
  // The same case on the hardware profile beneath its stack (its own value when it names none), or
  // why that run failed.
  std::optional<double> hardware_only;
  std::string hardware_only_error;

  // (simulated - published) / published; needs `simulated`.
  double relative_error() const;
  // Whether `simulated` satisfies the case's comparison and tolerance; needs `simulated`.
  bool pass() const;
};

// A suite's cases counted, and the error statistics of its scored cases by kind.
struct SuiteSummary {
  std::string name;
  size_t cases = 0, scored = 0, passed = 0, failed = 0, errors = 0;  // scored: validation cases only
  ErrorSummary validation;                                           // of the scored cases with a value
  std::optional<ErrorSummary> calculon;                              // when a scored case has its number
  ErrorSummary hardware_only;                                        // the scored cases on the hardware
  ErrorSummary calibration;                                          // the scored calibration cases
};

// The validation cases' error statistics at one scale (accuracy.h gpu_range).
struct ScaleErrors {
  std::string gpus;
  ErrorSummary errors;
};

// A shape check judged on one series of values: whether it holds and a sentence showing them.
struct ShapeVerdict {
  bool pass = false;
  std::string detail;
};

struct ShapeOutcome {
  std::string suite;
  ShapeCheck check;
  ShapeVerdict simulated, published;
};

struct GateOutcome {
  bool applied = false;  // the thresholds apply (--gate); the verdict is reported either way
  std::vector<std::pair<std::string, Gate>> thresholds;  // by suite, of the suites that have a gate
  std::vector<std::string> violations;                   // one sentence each
  bool pass() const { return violations.empty(); }
};

struct ValidationReport {
  nlohmann::json provenance;  // engine/provenance.h's
  int jobs = 1;               // cases simulated at once (the JSON states it in the provenance)
  double wall_s = 0;          // the whole run
  double cpu_s = 0;           // the cases' CPU time added up
  std::vector<CaseOutcome> cases;
  std::vector<SuiteSummary> suites;  // by name, those with cases
  std::vector<ScaleErrors> by_gpus;  // smallest scale first, those with validation cases
  std::vector<AccuracyRow> accuracy;
  std::vector<ShapeOutcome> shape_checks;  // of the checks whose cases all ran
  GateOutcome gate;
};

// The report of `set` (the cases that were run) and `results` (same order).
ValidationReport make_report(const ValidationSet& set, const std::vector<CaseResult>& results,
                             const ReportContext& context);

// The report as JSON. Keys:
//   cases    one object per case: id, suite, file, source {paper, where}, confidence, metric, unit,
//            comparison, published, tolerance, scored, network, role, and either simulated,
//            relative_error, pass (and calculon, calculon_relative_error, gpus, profile, stack,
//            hardware_only {simulated, relative_error} or {error}, iteration_time_s, breakdown, fits,
//            infeasible where known) or error; assumptions; wall_s and cpu_s (host time the case took)
//   summary  per suite: cases, scored, passed, failed (out of tolerance), errors (no value),
//            median_abs_error, p90_abs_error, max_abs_error over the scored cases (null when none),
//            calculon {cases, median_abs_error, max_abs_error} over cases with a Calculon number,
//            hardware_only and calibration likewise
//   shape_checks  per check: suite, name, kind, source, cases, and for the simulated and the
//            published values: pass and a detail sentence
//   by_gpus  the validation cases' error statistics by the GPUs they run on (accuracy.h's ranges)
//   accuracy their errors by framework, GPU and scale (accuracy.h's rows)
//   gate     applied, thresholds per gated suite, violations (sentences), pass
//   and schema_version, provenance, wall_s, cpu_s
nlohmann::json to_json(const ValidationReport& report);

// Renderings of a report.
std::string render_table(const ValidationReport& report);
std::string render_csv(const ValidationReport& report);

}  // namespace trainsim::validate

#endif  // TRAINSIM_SIM_VALIDATE_REPORT_H_
