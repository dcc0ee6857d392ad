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
        nlohmann::json measurement;
        if (hardware_only && !load_case_scenario(c.scenario).cluster.hardware.stack) {
          measurement = nullptr;  // nothing beneath: the case's own measurement is the hardware's
        } else {
          measurement = measure(c, variant);
          measurement["wall_s"] =
              std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
          measurement["cpu_s"] = static_cast<double>(std::clock() - cpu_start) / CLOCKS_PER_SEC;
        }
        return measurement;
      },
      [&](size_t task, IsolatedResult r) {
        const size_t i = task / variants;
        CaseResult& result = results[i];
        if (task % variants == 1) {
          result.hardware_only = r.ok ? std::move(r.value) : nlohmann::json{{"error", r.error}};
        } else {
          result.ok = r.ok;
          result.measurement = std::move(r.value);
          result.error = std::move(r.error);
        }
        if (--pending[i] == 0 && progress) progress(i, result);
      });
  return results;
}

std::optional<double> simulated_value(const CaseResult& r) {
  if (!r.ok || !r.measurement.contains("simulated") || !r.measurement.at("simulated").is_number()) {
    return std::nullopt;
  }
  const double v = r.measurement.at("simulated").get<double>();
  return std::isfinite(v) ? std::optional<double>(v) : std::nullopt;
}

}  // namespace trainsim::validate
