#include "sim/validate/runner.h"

#include <chrono>
#include <ctime>

#include "sim/common/isolated.h"
#include "sim/validate/metrics.h"

namespace trainsim::validate {

std::vector<CaseResult> run_cases(const std::vector<Case>& cases, const RunnerOptions& options,
                                  const std::function<void(size_t, const CaseResult&)>& progress) {
  std::vector<CaseResult> results(cases.size());
  run_isolated(
      cases.size(), {options.jobs, options.time_limit_s},
      [&](size_t i) {
        const auto start = std::chrono::steady_clock::now();
        const std::clock_t cpu_start = std::clock();
        nlohmann::json measurement = measure(cases[i]);
        measurement["wall_s"] =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        measurement["cpu_s"] = static_cast<double>(std::clock() - cpu_start) / CLOCKS_PER_SEC;
        return measurement;
      },
      [&](size_t i, IsolatedResult r) {
        CaseResult& result = results[i];
        result.ok = r.ok;
        result.measurement = std::move(r.value);
        result.error = std::move(r.error);
        if (progress) progress(i, result);
      });
  return results;
}

}  // namespace trainsim::validate
