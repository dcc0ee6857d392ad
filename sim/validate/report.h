// The validation report: one JSON object (cases, per-suite summary, shape checks, gate) from which
// the table and the CSV are rendered, so the three never disagree.
#ifndef TRAINSIM_SIM_VALIDATE_REPORT_H_
#define TRAINSIM_SIM_VALIDATE_REPORT_H_

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/validate/case.h"
#include "sim/validate/runner.h"

namespace trainsim::validate {

struct ReportContext {
  std::string command_line;  // as typed, for provenance
  int jobs = 1;
  double wall_s = 0;  // host seconds the whole run took
  bool gate = false;  // whether the CI gate applies (its verdict is always reported)
};

// Builds the report of `set` (the cases that were run) and `results` (same order). Keys:
//   cases    one object per case: id, suite, file, source {paper, where}, confidence, metric, unit,
//            comparison, published, tolerance, scored, and either simulated, relative_error, pass
//            (and calculon, calculon_relative_error, iteration_time_s, breakdown, fits, infeasible
//            where known) or error; assumptions; wall_s and cpu_s (host time the case took)
//   summary  per suite: cases, scored, passed, failed (out of tolerance), errors (no value),
//            median_abs_error, p90_abs_error, max_abs_error over the scored cases (null when none),
//            and calculon {cases, median_abs_error, max_abs_error} over cases with a Calculon number
//   shape_checks  per check: suite, name, kind, source, cases, and for the simulated and the
//            published values: pass and a detail sentence
//   by_gpus  the validation cases' error statistics by the GPUs they run on (accuracy.h's ranges)
//   accuracy their errors by framework, GPU and scale (accuracy.h's rows)
//   gate     applied, thresholds per gated suite, violations (sentences), pass
//   and provenance, wall_s (the whole run), cpu_s (the cases' CPU time added up)
nlohmann::json make_report(const ValidationSet& set, const std::vector<CaseResult>& results,
                           const ReportContext& context);

// Renderings of a report made by make_report.
std::string render_table(const nlohmann::json& report);
std::string render_csv(const nlohmann::json& report);

}  // namespace trainsim::validate

#endif  // TRAINSIM_SIM_VALIDATE_REPORT_H_
