#include "sim/validate/runner.h"

#include <chrono>
#include <cmath>
#include <ctime>

#include "sim/common/isolated.h"
#include "sim/validate/case_scenario.h"
#include "sim/validate/metrics.h"

namespace trainsim::validate {

std::vector<CaseResult> run_cases(const std::vector<Case>& cases, const RunnerOptions& options,
                                  const std::function<void(size_t, const CaseResult&)>& progress) {
  std::vector<CaseResult> results(cases.size());
  // Task t measures case t / variants as variant t % variants (1: the hardware profile beneath).
  const size_t variants = options.hardware_only ? 2 : 1;
  std::vector<size_t> pending(cases.size(), variants);
  run_isolated(
      cases.size() * variants, {options.jobs, options.time_limit_s},
      [&](size_t task) {
        const Case& c = cases[task / variants];
        const bool hardware_only = task % variants == 1;
        const auto start = std::chrono::steady_clock::now();
        const std::clock_t cpu_start = std::clock();
        Variant variant = options.variant;
        variant.hardware_only = variant.hardware_only || hardware_only;
        if (hardware_only && !load_case_scenario(c.scenario).cluster.hardware.stack) {
          return nlohmann::json();  // nothing beneath: the case's own measurement is the hardware's
        }
        Measurement measurement = measure(c, variant);
        measurement.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        measurement.cpu_s = static_cast<double>(std::clock() - cpu_start) / CLOCKS_PER_SEC;
        return to_json(measurement);
      },
      [&](size_t task, IsolatedResult r) {
        const size_t i = task / variants;
        CaseResult& result = results[i];
        if (task % variants == 1) {
          if (!r.ok) {
            result.hardware_only_error = std::move(r.error);
          } else if (!r.value.is_null()) {
            result.hardware_only = measurement_from_json(r.value);
          }
        } else {
          result.ok = r.ok;
          if (r.ok) result.measurement = measurement_from_json(r.value);
          result.error = std::move(r.error);
        }
        if (--pending[i] == 0 && progress) progress(i, result);
      });
  return results;
}

std::optional<double> simulated_value(const CaseResult& r) {
  if (!r.ok || !std::isfinite(r.measurement.simulated)) return std::nullopt;
  return r.measurement.simulated;
}

}  // namespace trainsim::validate
