// Bounded least squares: finds known parameters, stops on a bound when the minimum lies beyond it,
// and evaluates each iteration's points in one batch.
#include "sim/validate/least_squares.h"

#include <cmath>

#include <gtest/gtest.h>

namespace trainsim::validate {
namespace {

// Relative errors of y = a / x + b x against data made with a = 2, b = 0.5 (a model whose time is
// inversely proportional to one rate and proportional to another, like the stack's fractions).
std::vector<Vector> model_residuals(const std::vector<Vector>& points) {
  std::vector<Vector> out;
  for (const Vector& p : points) {
    Vector r;
    for (const double x : {0.5, 1.0, 2.0, 4.0}) {
      const double truth = 2 / x + 0.5 * x;
      r.push_back((p[0] / x + p[1] * x - truth) / truth);
    }
    out.push_back(r);
  }
  return out;
}

TEST(LeastSquares, FindsTheParametersTheDataWasMadeWith) {
  int batches = 0;
  BoundedProblem problem{{0.1, 0.1}, {5, 5}, {1, 1}, [&](const std::vector<Vector>& points) {
                           ++batches;
                           return model_residuals(points);
                         }};
  const LeastSquaresResult r = minimize_bounded(problem);
  EXPECT_TRUE(r.converged);
  EXPECT_NEAR(r.x[0], 2, 1e-4);
  EXPECT_NEAR(r.x[1], 0.5, 1e-4);
  EXPECT_LT(r.sum_of_squares, 1e-10);
  // Analytic derivatives at the minimum: d r_i / d a = 1 / (x truth_i).
  EXPECT_NEAR(r.jacobian[0][0], 1 / (0.5 * (2 / 0.5 + 0.25)), 1e-3);
  EXPECT_LT(batches, r.evaluations);  // probes of one iteration share a batch
  // Deterministic.
  const LeastSquaresResult again = minimize_bounded(problem);
  EXPECT_EQ(again.x, r.x);
}

TEST(LeastSquares, StopsOnTheBoundWhenTheMinimumLiesBeyondIt) {
  BoundedProblem problem{{0.1, 0.1}, {1.5, 5}, {1, 1}, model_residuals};
  const LeastSquaresResult r = minimize_bounded(problem);
  EXPECT_DOUBLE_EQ(r.x[0], 1.5);
  EXPECT_GT(r.sum_of_squares, 1e-6);
}

TEST(LeastSquares, RefusesAStartOutsideTheBounds) {
  EXPECT_THROW(minimize_bounded({{0.1}, {1}, {2}, model_residuals}), std::invalid_argument);
}

TEST(LeastSquares, SolvesSymmetricPositiveDefiniteSystems) {
  const Vector x = solve_spd({{4, 2}, {2, 3}}, {2, 5});
  ASSERT_EQ(x.size(), 2u);
  EXPECT_NEAR(4 * x[0] + 2 * x[1], 2, 1e-12);
  EXPECT_NEAR(2 * x[0] + 3 * x[1], 5, 1e-12);
  EXPECT_TRUE(solve_spd({{1, 1}, {1, 1}}, {1, 1}).empty());  // singular
}

}  // namespace
}  // namespace trainsim::validate
