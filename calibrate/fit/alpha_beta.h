// Latency/bandwidth (alpha-beta) fits of time against size: t = alpha + beta·bytes, fitted in
// relative error (so a 10 us point counts as much as a 10 ms one), and piecewise over size ranges
// the way NCCL switches protocols (LL for small messages, LL128, Simple for large ones).
#ifndef TRAINSIM_CALIBRATE_FIT_ALPHA_BETA_H_
#define TRAINSIM_CALIBRATE_FIT_ALPHA_BETA_H_

#include <cstddef>
#include <span>
#include <vector>

namespace trainsim::calibrate {

struct Point {
  double bytes = 0;
  double seconds = 0;  // positive
};

// Goodness of a fit over its points: |fitted - measured| / measured.
struct FitQuality {
  size_t points = 0;
  double max_relative_error = 0;
  double rms_relative_error = 0;
};

struct LineFit {
  double alpha_s = 0;          // latency, >= 0
  double beta_s_per_byte = 0;  // inverse bandwidth, >= 0
  FitQuality quality;

  double at(double bytes) const { return alpha_s + beta_s_per_byte * bytes; }
};

// Least squares of relative residuals, with alpha and beta constrained to be non-negative (a
// negative latency or bandwidth has no meaning; the constrained optimum then lies on the bound).
// Throws std::invalid_argument for fewer than two points or a time that is not positive.
LineFit fit_line(std::span<const Point> points);

// One size range of a piecewise fit: points [begin, end) of the sorted points.
struct Segment {
  size_t begin = 0;
  size_t end = 0;
  LineFit fit;
};

// The piecewise fit of `points` (sorted by bytes here; at least two) with at most `max_segments`
// contiguous ranges of at least `min_points` points each, each with a positive beta. The number of
// ranges is chosen by the Bayesian information criterion on the relative residuals (three
// parameters per range: alpha, beta and where it starts), so a range is only split when the data
// ask for it. Relative residuals below 1e-3 count as exact (timer resolution, and profiles keep four
// significant digits). Returns an empty
// vector when no segmentation has a positive beta in every range (times that do not grow with size).
std::vector<Segment> fit_piecewise(std::vector<Point> points, int max_segments = 3, size_t min_points = 3);

// Quality of `fit` over `points`.
FitQuality quality_of(const LineFit& fit, std::span<const Point> points);

}  // namespace trainsim::calibrate

#endif  // TRAINSIM_CALIBRATE_FIT_ALPHA_BETA_H_
