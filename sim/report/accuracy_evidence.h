// How well trainsim's validation reproduced published runs like a scenario's: the rows of the
// accuracy table (validate/accuracy.h computes and ships them) that `trainsim run` and `trainsim
// search` quote for the scenario's GPU and scale, typed, with their JSON and their table lines.
#ifndef TRAINSIM_SIM_REPORT_ACCURACY_EVIDENCE_H_
#define TRAINSIM_SIM_REPORT_ACCURACY_EVIDENCE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace trainsim::report {

// The validation errors of one regime.
struct AccuracyRow {
  std::string framework;  // the cases' framework, as validate::regime_framework gives it
  std::string gpu;        // their hardware profile's GPU, as the vendor names it
  std::string gpus;       // their scale: validate::gpu_range() of the GPUs they run on
  std::string role;       // "validation", or "calibration": cases a stack profile may be fitted on
  int64_t cases = 0;
  double median_abs_error = 0;  // of the relative errors, fractions
  double max_abs_error = 0;
  int64_t simulated_faster = 0;     // of the cases, those simulated faster than measured by over 0.1 %
  std::vector<std::string> suites;  // where the cases come from, sorted
};

// Keys: the fields' names.
nlohmann::json to_json(const AccuracyRow& row);

// The evidence for one scenario's prediction.
struct AccuracyEvidence {
  std::string framework;  // the scenario's, as validate::regime_framework gives it
  std::string gpu;        // its GPU
  std::string gpus;       // its scale
  // When no row of its GPU is at its scale: the nearest scale that has some (none when its GPU has none).
  std::optional<std::string> nearest_gpus;
  std::vector<AccuracyRow> rows;  // of its GPU at its scale, or at the nearest
};

// Keys: framework, gpu, gpus, rows, and nearest_gpus when set.
nlohmann::json to_json(const AccuracyEvidence& evidence);

// One line per row ("# accuracy: published runs on ..."), marking the scenario's framework.
std::string render_accuracy(const AccuracyEvidence& evidence);

}  // namespace trainsim::report

#endif  // TRAINSIM_SIM_REPORT_ACCURACY_EVIDENCE_H_
