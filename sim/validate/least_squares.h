// Bounded nonlinear least squares for a few parameters whose residuals are expensive to evaluate (a
// simulation per measurement): Levenberg-Marquardt in coordinates scaled to the bounds, with the
// Jacobian by finite differences, every point of an iteration evaluated in one batch so the caller
// can run them in parallel. Deterministic: the same residual function gives the same steps.
#ifndef TRAINSIM_SIM_VALIDATE_LEAST_SQUARES_H_
#define TRAINSIM_SIM_VALIDATE_LEAST_SQUARES_H_

#include <functional>
#include <vector>

namespace trainsim::validate {

using Vector = std::vector<double>;

struct BoundedProblem {
  Vector lower;  // per parameter; lower < upper
  Vector upper;
  Vector start;  // within the bounds
  // The residuals (one per measurement, the same count for every point) at each of `points`.
  std::function<std::vector<Vector>(const std::vector<Vector>& points)> residuals;
};

struct LeastSquaresOptions {
  int max_iterations = 30;
  // The finite-difference step, as a fraction of each parameter's range.
  double step = 0.01;
  // Converged when an accepted step lowers the sum of squares by less than this fraction.
  double tolerance = 1e-4;
};

struct LeastSquaresResult {
  Vector x;                      // the parameters at the minimum found
  Vector residuals;              // at x
  std::vector<Vector> jacobian;  // d residual_i / d x_j at x, measurements x parameters
  double sum_of_squares = 0;
  int iterations = 0;
  int evaluations = 0;  // points evaluated
  bool converged = false;
};

// Minimises the sum of squared residuals within the bounds. Throws std::invalid_argument for
// inconsistent bounds or starting point, and std::runtime_error when the residual function returns
// the wrong number of points or residuals.
LeastSquaresResult minimize_bounded(const BoundedProblem& problem, const LeastSquaresOptions& options = {});

// Solves the symmetric positive definite system a x = b (Cholesky); nullopt-like empty result when
// `a` is singular.
Vector solve_spd(std::vector<Vector> a, Vector b);

}  // namespace trainsim::validate

#endif  // TRAINSIM_SIM_VALIDATE_LEAST_SQUARES_H_
