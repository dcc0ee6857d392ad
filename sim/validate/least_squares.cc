#include "sim/validate/least_squares.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

namespace trainsim::validate {
namespace {

double sum_of_squares(const Vector& r) {
  double s = 0;
  for (const double v : r) s += v * v;
  return s;
}

}  // namespace

Vector solve_spd(std::vector<Vector> a, Vector b) {
  const size_t n = b.size();
  for (size_t j = 0; j < n; ++j) {
    double d = a[j][j];
    for (size_t k = 0; k < j; ++k) d -= a[j][k] * a[j][k];
    if (!(d > 1e-300)) return {};
    a[j][j] = std::sqrt(d);
    for (size_t i = j + 1; i < n; ++i) {
      double v = a[i][j];
      for (size_t k = 0; k < j; ++k) v -= a[i][k] * a[j][k];
      a[i][j] = v / a[j][j];
    }
  }
  for (size_t i = 0; i < n; ++i) {  // L y = b
    for (size_t k = 0; k < i; ++k) b[i] -= a[i][k] * b[k];
    b[i] /= a[i][i];
  }
  for (size_t i = n; i-- > 0;) {  // L^T x = y
    for (size_t k = i + 1; k < n; ++k) b[i] -= a[k][i] * b[k];
    b[i] /= a[i][i];
  }
  return b;
}

LeastSquaresResult minimize_bounded(const BoundedProblem& problem, const LeastSquaresOptions& options) {
  const size_t p = problem.start.size();
  if (problem.lower.size() != p || problem.upper.size() != p) {
    throw std::invalid_argument("bounds and starting point differ in size");
  }
  for (size_t j = 0; j < p; ++j) {
    if (!(problem.lower[j] < problem.upper[j]) || problem.start[j] < problem.lower[j] ||
        problem.start[j] > problem.upper[j]) {
      throw std::invalid_argument(fmt::format("parameter {}: start {} outside the bounds [{}, {}]", j,
                                              problem.start[j], problem.lower[j], problem.upper[j]));
    }
  }
  // Scaled coordinates: u = (x - lower) / (upper - lower) in [0, 1].
  const auto to_x = [&](const Vector& u) {
    Vector x(p);
    for (size_t j = 0; j < p; ++j) x[j] = problem.lower[j] + u[j] * (problem.upper[j] - problem.lower[j]);
    return x;
  };
  LeastSquaresResult out;
  size_t measurements = 0;
  const auto evaluate = [&](const std::vector<Vector>& us) {
    std::vector<Vector> xs;
    for (const Vector& u : us) xs.push_back(to_x(u));
    std::vector<Vector> r = problem.residuals(xs);
    if (r.size() != xs.size())
      throw std::runtime_error("the residual function returned the wrong number of points");
    for (const Vector& v : r) {
      if (measurements == 0) measurements = v.size();
      if (v.size() != measurements || v.empty()) {
        throw std::runtime_error("the residual function returned a different number of residuals per point");
      }
    }
    out.evaluations += static_cast<int>(xs.size());
    return r;
  };

  Vector u(p);
  for (size_t j = 0; j < p; ++j) {
    u[j] = (problem.start[j] - problem.lower[j]) / (problem.upper[j] - problem.lower[j]);
  }
  // d r / d u by forward differences (backward at the upper bound), all probes in one batch.
  const auto jacobian = [&](const Vector& at, const Vector& r_at) {
    std::vector<Vector> probes;
    Vector h(p);
    for (size_t j = 0; j < p; ++j) {
      Vector v = at;
      h[j] = v[j] + options.step <= 1 ? options.step : -options.step;
      v[j] += h[j];
      probes.push_back(v);
    }
    const std::vector<Vector> probed = evaluate(probes);
    std::vector<Vector> jac(measurements, Vector(p, 0.0));
    for (size_t j = 0; j < p; ++j) {
      for (size_t i = 0; i < measurements; ++i) jac[i][j] = (probed[j][i] - r_at[i]) / h[j];
    }
    return jac;
  };
  Vector r = evaluate({u}).front();
  double ss = sum_of_squares(r);
  double lambda = 1e-2;
  std::vector<Vector> jac;  // in scaled coordinates
  bool jacobian_at_u = false;
  for (out.iterations = 0; out.iterations < options.max_iterations; ++out.iterations) {
    jac = jacobian(u, r);
    jacobian_at_u = true;
    std::vector<Vector> jtj(p, Vector(p, 0.0));
    Vector jtr(p, 0.0);
    for (size_t i = 0; i < measurements; ++i) {
      for (size_t a = 0; a < p; ++a) {
        jtr[a] += jac[i][a] * r[i];
        for (size_t b = 0; b < p; ++b) jtj[a][b] += jac[i][a] * jac[i][b];
      }
    }
    bool accepted = false;
    double gain = 0;
    for (int attempt = 0; attempt < 10 && !accepted; ++attempt) {
      std::vector<Vector> a = jtj;
      Vector b(p);
      for (size_t j = 0; j < p; ++j) {
        a[j][j] += lambda * std::max(jtj[j][j], 1e-12);
        b[j] = -jtr[j];
      }
      const Vector delta = solve_spd(a, b);
      if (delta.empty()) {
        lambda *= 10;
        continue;
      }
      Vector trial(p);
      double moved = 0;
      for (size_t j = 0; j < p; ++j) {
        trial[j] = std::clamp(u[j] + delta[j], 0.0, 1.0);
        moved = std::max(moved, std::abs(trial[j] - u[j]));
      }
      if (moved < 1e-9) break;  // pinned at the bounds: nowhere to go
      const Vector tr = evaluate({trial}).front();
      const double tss = sum_of_squares(tr);
      if (tss < ss) {
        gain = (ss - tss) / std::max(ss, 1e-300);
        u = trial;
        r = tr;
        ss = tss;
        jacobian_at_u = false;
        lambda = std::max(lambda / 3, 1e-7);
        accepted = true;
      } else {
        lambda *= 4;
      }
    }
    if (!accepted || gain < options.tolerance) {
      out.converged = true;
      break;
    }
  }
  out.x = to_x(u);
  out.residuals = r;
  out.sum_of_squares = ss;
  if (!jacobian_at_u) jac = jacobian(u, r);
  // In the parameters' own units.
  out.jacobian = jac;
  for (Vector& row : out.jacobian) {
    for (size_t j = 0; j < p; ++j) row[j] /= problem.upper[j] - problem.lower[j];
  }
  return out;
}

}  // namespace trainsim::validate
