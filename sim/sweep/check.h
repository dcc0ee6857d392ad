// How far the closed-form estimate is from the simulation on a sweep: K points drawn by a seeded,
// platform-independent shuffle, each estimated and simulated (in a forked child), set side by side
// with the relative error of the iteration time.
#ifndef TRAINSIM_SIM_SWEEP_CHECK_H_
#define TRAINSIM_SIM_SWEEP_CHECK_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "sim/sweep/evaluate.h"
#include "sim/sweep/expand.h"

namespace trainsim::sweep {

// `k` distinct elements of `population` (all of them when k exceeds its size), in drawn order, the
// same for the same seed on every platform.
std::vector<size_t> draw(const std::vector<size_t>& population, size_t k, uint64_t seed);

struct CheckRow {
  const Point* point = nullptr;
  std::string analytic_status, simulated_status;  // result statuses (evaluate.h)
  double analytic_s = 0, simulated_s = 0;         // iteration times, when the status has one
  bool compared = false;                          // both have an iteration time
  double relative_error = 0;                      // (analytic - simulated) / simulated
  std::string note;                               // a status's reason when not compared
};

// Estimates and simulates each of `points` (the simulation as `simulation` says: network, every rank),
// `jobs` at a time, each point's two evaluations in one child limited to `time_limit_s` (0: none). Rows
// in `points` order.
std::vector<CheckRow> check_analytic(const SweepFile& sweep, const std::vector<const Point*>& points,
                                     const EvaluateOptions& simulation, int jobs, double time_limit_s);

// The table (point, axis values, closed form, simulated, error) and a last line with the median and
// maximum absolute relative error over the compared points.
std::string render_check(const std::vector<CheckRow>& rows, uint64_t seed);

}  // namespace trainsim::sweep

#endif  // TRAINSIM_SIM_SWEEP_CHECK_H_
