#include "calibrate/fit/collective_fits.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <tuple>

#include <fmt/format.h>

#include "calibrate/collective_kinds.h"

namespace trainsim::calibrate {

double predicted_duration_s(const config::CollectiveFit& fit, double bytes) {
  return fit.latency_s +
         bytes * bus_bandwidth_factor(fit.kind, static_cast<int>(fit.ranks)) / fit.bus_bandwidth_bytes_per_s;
}

std::vector<FittedCollective> fit_collectives(const std::vector<config::CollectiveSample>& samples,
                                              std::vector<std::string>* notes) {
  // kind, nodes, ranks, algorithm
  using Key =
      std::tuple<config::CollectiveKind, int64_t, int64_t, std::optional<config::CollectiveAlgorithm>>;
  std::map<Key, std::vector<Point>> groups;
  for (const config::CollectiveSample& s : samples) {
    if (s.bytes <= 0) continue;
    groups[{s.kind, s.nodes, s.ranks, s.algorithm}].push_back({s.bytes, s.duration_s});
  }
  std::vector<FittedCollective> out;
  for (const auto& [key, points] : groups) {
    const auto& [kind, nodes, ranks, algorithm] = key;
    const std::string group = fmt::format(
        "{} over {} ranks on {} node{}{}", config::to_string(kind), ranks, nodes, nodes == 1 ? "" : "s",
        algorithm ? fmt::format(" ({})", config::to_string(*algorithm)) : "");
    const double factor = bus_bandwidth_factor(kind, static_cast<int>(ranks));
    if (factor <= 0) {
      if (notes != nullptr) {
        notes->push_back(
            fmt::format("{}: samples only (bus bandwidth is 0 by nccl-tests' definition)", group));
      }
      continue;
    }
    if (points.size() < 3) {
      if (notes != nullptr) notes->push_back(fmt::format("{}: samples only (fewer than 3 sizes)", group));
      continue;
    }
    const std::vector<Segment> segments = fit_piecewise(points);
    if (segments.empty()) {
      if (notes != nullptr)
        notes->push_back(fmt::format("{}: samples only (times do not grow with size)", group));
      continue;
    }
    std::vector<Point> sorted = points;
    std::stable_sort(sorted.begin(), sorted.end(),
                     [](const Point& a, const Point& b) { return a.bytes < b.bytes; });
    for (size_t i = 0; i < segments.size(); ++i) {
      const Segment& seg = segments[i];
      FittedCollective f;
      f.fit.kind = kind;
      f.fit.ranks = ranks;
      f.fit.nodes = nodes;
      f.fit.algorithm = algorithm;
      f.fit.min_bytes =
          i == 0 ? sorted[seg.begin].bytes : std::sqrt(sorted[seg.begin - 1].bytes * sorted[seg.begin].bytes);
      f.fit.max_bytes = i + 1 == segments.size()
                            ? sorted[seg.end - 1].bytes
                            : std::sqrt(sorted[seg.end - 1].bytes * sorted[seg.end].bytes);
      f.fit.latency_s = seg.fit.alpha_s;
      f.fit.bus_bandwidth_bytes_per_s = factor / seg.fit.beta_s_per_byte;
      f.quality = seg.fit.quality;
      out.push_back(f);
    }
  }
  return out;
}

}  // namespace trainsim::calibrate
