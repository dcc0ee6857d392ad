// Interpolation of measured efficiencies over three size dimensions, in log space: the cost model's
// way of reading a table of samples at a shape that was not measured.
#ifndef TRAINSIM_SIM_COST_INTERPOLATION_H_
#define TRAINSIM_SIM_COST_INTERPOLATION_H_

#include <array>
#include <string>
#include <vector>

namespace trainsim::cost {

struct Sample3 {
  std::array<double, 3> at;  // positive coordinates (sizes)
  double value;
};

struct Interpolated {
  double value = 0;
  bool extrapolated = false;  // the query lies outside the samples' bounding box in some dimension
  std::string range;          // the bounding box, "[a, b] x [c, d] x [e, f]", for warnings
};

// Inverse-squared-distance weighting of the (up to) four nearest samples in log2 coordinates; an
// exact match returns that sample's value. Deterministic (ties broken by sample order). `samples`
// must not be empty.
Interpolated interpolate_log3(const std::vector<Sample3>& samples, const std::array<double, 3>& query);

}  // namespace trainsim::cost

#endif  // TRAINSIM_SIM_COST_INTERPOLATION_H_
