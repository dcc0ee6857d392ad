#include "calibrate/backend.h"

#include <algorithm>
#include <cmath>

namespace trainsim::calibrate {

int runs_per_repetition(double single_run_s, const TimingPolicy& policy) {
  if (!(single_run_s > 0) || policy.min_repetition_s <= 0) return 1;
  const double runs = std::ceil(policy.min_repetition_s / single_run_s);
  return static_cast<int>(
      std::clamp(runs, 1.0, static_cast<double>(std::max(1, policy.max_runs_per_repetition))));
}

int rotation_sets(double working_set_bytes, double cache_bytes, double budget_bytes) {
  if (!(working_set_bytes > 0)) return 1;
  const double wanted = std::ceil(2.0 * cache_bytes / working_set_bytes);
  const double affordable = std::floor(budget_bytes / working_set_bytes);
  return static_cast<int>(std::clamp(std::min(wanted, affordable), 1.0, 16384.0));
}

}  // namespace trainsim::calibrate
