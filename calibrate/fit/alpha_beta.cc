#include "calibrate/fit/alpha_beta.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace trainsim::calibrate {
namespace {

constexpr double kResolution = 1e-3;  // relative residuals below this are timer and rounding noise
constexpr size_t kMaxBoundaries = 96;

// Sum of squared relative residuals.
double squared_error(const LineFit& fit, std::span<const Point> points) {
  double sse = 0;
  for (const Point& p : points) {
    const double r = (fit.at(p.bytes) - p.seconds) / p.seconds;
    sse += r * r;
  }
  return sse;
}

}  // namespace

FitQuality quality_of(const LineFit& fit, std::span<const Point> points) {
  FitQuality q;
  q.points = points.size();
  double sum = 0;
  for (const Point& p : points) {
    const double r = std::abs(fit.at(p.bytes) - p.seconds) / p.seconds;
    q.max_relative_error = std::max(q.max_relative_error, r);
    sum += r * r;
  }
  q.rms_relative_error = points.empty() ? 0 : std::sqrt(sum / static_cast<double>(points.size()));
  return q;
}

LineFit fit_line(std::span<const Point> points) {
  if (points.size() < 2) throw std::invalid_argument("an alpha-beta fit needs at least two points");
  double scale = 0;  // bytes are scaled to [0, 1] for the normal equations
  for (const Point& p : points) {
    if (!(p.seconds > 0) || !std::isfinite(p.seconds)) {
      throw std::invalid_argument("an alpha-beta fit needs positive finite times");
    }
    scale = std::max(scale, p.bytes);
  }
  if (scale <= 0) scale = 1;
  // Weighted least squares, weight 1/t^2: minimises the squared relative residuals.
  double s = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (const Point& p : points) {
    const double w = 1.0 / (p.seconds * p.seconds);
    const double x = p.bytes / scale;
    s += w;
    sx += w * x;
    sy += w * p.seconds;
    sxx += w * x * x;
    sxy += w * x * p.seconds;
  }
  const double det = s * sxx - sx * sx;
  double alpha = 0;
  double beta = 0;
  if (det > 1e-12 * s * sxx) {
    beta = (s * sxy - sx * sy) / det;
    alpha = (sy - beta * sx) / s;
  } else {
    alpha = sy / s;  // all points at one size: latency only
  }
  if (alpha < 0) {  // on the bound alpha = 0: t = beta·x
    alpha = 0;
    beta = sxx > 0 ? sxy / sxx : 0;
  }
  if (beta < 0) {  // on the bound beta = 0: t = alpha
    beta = 0;
    alpha = sy / s;
  }
  LineFit fit;
  fit.alpha_s = alpha;
  fit.beta_s_per_byte = beta / scale;
  fit.quality = quality_of(fit, points);
  return fit;
}

std::vector<Segment> fit_piecewise(std::vector<Point> points, int max_segments, size_t min_points) {
  if (points.size() < 2) throw std::invalid_argument("an alpha-beta fit needs at least two points");
  std::stable_sort(points.begin(), points.end(),
                   [](const Point& a, const Point& b) { return a.bytes < b.bytes; });
  const size_t n = points.size();
  min_points = std::max<size_t>(2, std::min(min_points, n));
  max_segments = std::max(1, max_segments);
  const double infinity = std::numeric_limits<double>::infinity();

  // Ranges start and end at candidate boundaries: every point, or evenly spaced ones for long
  // sweeps (nccl-tests with a fixed step), which keeps the search below ~100^3 operations.
  std::vector<bool> boundary(n + 1, true);
  const size_t stride = n > kMaxBoundaries ? (n + kMaxBoundaries - 1) / kMaxBoundaries : 1;
  for (size_t i = 1; i < n; ++i) boundary[i] = i % stride == 0;
  // fits[i][j]: the fit of points [i, j), when it is a valid range (enough points, beta > 0).
  std::vector<std::vector<LineFit>> fits(n + 1, std::vector<LineFit>(n + 1));
  std::vector<std::vector<double>> cost(n + 1, std::vector<double>(n + 1, infinity));
  for (size_t i = 0; i < n; ++i) {
    if (!boundary[i]) continue;
    for (size_t j = i + min_points; j <= n; ++j) {
      if (!boundary[j]) continue;
      const std::span<const Point> range(points.data() + i, j - i);
      LineFit f = fit_line(range);
      if (f.beta_s_per_byte <= 0) continue;
      cost[i][j] = squared_error(f, range);
      fits[i][j] = f;
    }
  }
  // best[k][j]: the smallest error covering points [0, j) with k ranges; from[k][j] where the last starts.
  const size_t segments = static_cast<size_t>(max_segments);
  std::vector<std::vector<double>> best(segments + 1, std::vector<double>(n + 1, infinity));
  std::vector<std::vector<size_t>> from(segments + 1, std::vector<size_t>(n + 1, 0));
  best[0][0] = 0;
  for (size_t k = 1; k <= segments; ++k) {
    for (size_t j = 1; j <= n; ++j) {
      for (size_t i = 0; i < j; ++i) {
        if (best[k - 1][i] == infinity || cost[i][j] == infinity) continue;
        const double total = best[k - 1][i] + cost[i][j];
        if (total < best[k][j]) {
          best[k][j] = total;
          from[k][j] = i;
        }
      }
    }
  }
  size_t chosen = 0;
  double chosen_bic = infinity;
  const double count = static_cast<double>(n);
  for (size_t k = 1; k <= segments; ++k) {
    if (best[k][n] == infinity) continue;
    const double mse = std::max(best[k][n] / count, kResolution * kResolution);
    const double bic = count * std::log(mse) + 3.0 * static_cast<double>(k) * std::log(count);
    if (bic < chosen_bic - 1e-9) {
      chosen_bic = bic;
      chosen = k;
    }
  }
  std::vector<Segment> result;
  if (chosen == 0) return result;
  size_t end = n;
  for (size_t k = chosen; k >= 1; --k) {
    const size_t begin = from[k][end];
    result.push_back({begin, end, fits[begin][end]});
    end = begin;
  }
  std::reverse(result.begin(), result.end());
  return result;
}

}  // namespace trainsim::calibrate
