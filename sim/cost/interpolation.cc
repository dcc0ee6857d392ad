#include "sim/cost/interpolation.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include <fmt/format.h>

namespace trainsim::cost {

Interpolated interpolate_log3(const std::vector<Sample3>& samples, const std::array<double, 3>& query) {
  constexpr size_t kNeighbours = 4;
  std::array<double, 3> lo = samples.front().at;
  std::array<double, 3> hi = samples.front().at;
  for (const Sample3& s : samples) {
    for (size_t d = 0; d < 3; ++d) {
      lo[d] = std::min(lo[d], s.at[d]);
      hi[d] = std::max(hi[d], s.at[d]);
    }
  }
  Interpolated out;
  for (size_t d = 0; d < 3; ++d) out.extrapolated |= query[d] < lo[d] || query[d] > hi[d];
  out.range = fmt::format("[{}, {}] x [{}, {}] x [{}, {}]", lo[0], hi[0], lo[1], hi[1], lo[2], hi[2]);

  std::vector<std::pair<double, size_t>> distances;
  distances.reserve(samples.size());
  for (size_t i = 0; i < samples.size(); ++i) {
    double d2 = 0;
    for (size_t d = 0; d < 3; ++d) {
      const double delta = std::log2(samples[i].at[d]) - std::log2(query[d]);
      d2 += delta * delta;
    }
    if (d2 == 0) {
      out.value = samples[i].value;
      return out;
    }
    distances.emplace_back(d2, i);
  }
  const size_t count = std::min(kNeighbours, distances.size());
  std::partial_sort(distances.begin(), distances.begin() + static_cast<long>(count), distances.end());
  double weight_sum = 0;
  double value_sum = 0;
  for (size_t i = 0; i < count; ++i) {
    const double w = 1.0 / distances[i].first;
    weight_sum += w;
    value_sum += w * samples[distances[i].second].value;
  }
  out.value = value_sum / weight_sum;
  return out;
}

}  // namespace trainsim::cost
