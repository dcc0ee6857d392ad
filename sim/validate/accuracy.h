// How far trainsim's predictions land from measured runs, by regime: `trainsim validate`'s errors on
// its scored, timed cases grouped by framework, GPU, scale and role (validation or calibration). The
// table of the shipped cases lives in scenarios/validation/accuracy.yaml, which the build compiles
// in, so that every `trainsim run` can say how well published runs like it were predicted; ctest's
// validation run fails when the file no longer matches what the cases give.
#ifndef TRAINSIM_SIM_VALIDATE_ACCURACY_H_
#define TRAINSIM_SIM_VALIDATE_ACCURACY_H_

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "sim/config/scenario.h"
#include "sim/report/accuracy_evidence.h"
#include "sim/validate/case.h"
#include "sim/validate/runner.h"

namespace trainsim::validate {

// The validation errors of one regime (the type the reports quote).
using report::AccuracyRow;

// The scale range a run on `gpus` GPUs belongs to: "1-8", "9-64", "65-512" or "513+".
std::string gpu_range(int64_t gpus);
// Those ranges, smallest first.
std::vector<std::string> gpu_ranges();

// The framework whose runs a scenario's are: its `framework`, or when that is generic and it runs on
// a stack profile, the stack's (the NeMo suites set NeMo's behaviour key by key on a NeMo stack).
std::string regime_framework(const config::Scenario& scenario);

// The rows of a validation run: its scored cases with a timed metric and a value, by framework, GPU,
// scale and role, in that order. `results` are in the order of `set.cases`; a result carries its
// framework and GPU in its measurement (measure() records them).
std::vector<AccuracyRow> accuracy_rows(const ValidationSet& set, const std::vector<CaseResult>& results);

// The accuracy file: a comment naming the command that regenerates it, then the rows.
std::string accuracy_yaml(const std::vector<AccuracyRow>& rows);
// Parses an accuracy file's text (`file` names it in errors). Throws config::ConfigError naming the
// file, line and key of every mistake.
std::vector<AccuracyRow> parse_accuracy(const std::string& text, const std::string& file);
// Reads and parses an accuracy file. Throws config::ConfigError naming it when it cannot be read,
// and as parse_accuracy.
std::vector<AccuracyRow> load_accuracy(const std::filesystem::path& file);

// Where `measured` departs from `shipped`: a regime only one has, a different case count or number
// simulated faster, or a median or maximum error that moved by more than `tolerance` (a fraction).
// One sentence each; empty when the shipped table still holds.
std::vector<std::string> accuracy_drift(const std::vector<AccuracyRow>& shipped,
                                        const std::vector<AccuracyRow>& measured, double tolerance);

// The rows built into this binary (scenarios/validation/accuracy.yaml at build time).
const std::vector<AccuracyRow>& shipped_accuracy();

// The evidence for a scenario's prediction, from `rows`: the scenario's framework (as
// regime_framework gives it), GPU and scale, and every row of its GPU at its scale, or when there is
// none, the nearest scale that has some and its rows (none when its GPU has none).
report::AccuracyEvidence accuracy_for(const config::Scenario& scenario, const std::vector<AccuracyRow>& rows);

}  // namespace trainsim::validate

#endif  // TRAINSIM_SIM_VALIDATE_ACCURACY_H_
