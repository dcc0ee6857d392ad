#include "calibrate/statistics.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

namespace trainsim::calibrate {
namespace {

// Nearest-rank percentile of sorted values, 0 < p < 100.
double percentile(const std::vector<double>& sorted, double p) {
  const double rank = std::ceil(p / 100.0 * static_cast<double>(sorted.size()));
  const size_t index = static_cast<size_t>(std::max(1.0, rank)) - 1;
  return sorted[std::min(index, sorted.size() - 1)];
}

}  // namespace

double median(std::vector<double> values) {
  if (values.empty()) throw std::invalid_argument("median of no values");
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

Summary summarize(std::vector<double> durations_s) {
  if (durations_s.empty()) throw std::invalid_argument("no timed repetitions to summarize");
  for (const double d : durations_s) {
    if (!(d > 0) || !std::isfinite(d)) {
      throw std::invalid_argument("a timed repetition is not a positive finite duration");
    }
  }
  std::sort(durations_s.begin(), durations_s.end());
  Summary s;
  s.repetitions = static_cast<int>(durations_s.size());
  s.median_s = median(durations_s);
  s.mean_s =
      std::accumulate(durations_s.begin(), durations_s.end(), 0.0) / static_cast<double>(s.repetitions);
  s.min_s = durations_s.front();
  s.max_s = durations_s.back();
  s.p10_s = percentile(durations_s, 10);
  s.p90_s = percentile(durations_s, 90);
  double variance = 0;
  for (const double d : durations_s) variance += (d - s.mean_s) * (d - s.mean_s);
  variance /= static_cast<double>(s.repetitions);
  s.cv = std::sqrt(variance) / s.mean_s;
  return s;
}

}  // namespace trainsim::calibrate
