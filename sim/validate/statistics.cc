#include "sim/validate/statistics.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace trainsim::validate {

double relative_error(double simulated, double published) { return (simulated - published) / published; }

bool within_tolerance(const Case& c, double simulated) {
  if (!std::isfinite(simulated)) return false;
  const double slack = c.tolerance.relative ? c.tolerance.value * std::abs(c.published) : c.tolerance.value;
  switch (c.comparison) {
    case Comparison::kEqual:
      return std::abs(simulated - c.published) <= slack;
    case Comparison::kAtLeast:
      return simulated >= c.published - slack;
    case Comparison::kAtMost:
      return simulated <= c.published + slack;
  }
  return false;
}

bool is_scored(const Case& c) {
  return c.comparison == Comparison::kEqual && c.confidence != Confidence::kUnconfirmed;
}

double quantile(std::vector<double> values, double q) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const double position = q * static_cast<double>(values.size() - 1);
  const size_t below = static_cast<size_t>(std::floor(position));
  const size_t above = std::min(below + 1, values.size() - 1);
  const double fraction = position - static_cast<double>(below);
  return values[below] + fraction * (values[above] - values[below]);
}

ErrorSummary summarize_errors(const std::vector<double>& abs_errors) {
  ErrorSummary s;
  s.cases = abs_errors.size();
  if (abs_errors.empty()) return s;
  s.median_abs_error = quantile(abs_errors, 0.5);
  s.p90_abs_error = quantile(abs_errors, 0.9);
  s.max_abs_error = *std::max_element(abs_errors.begin(), abs_errors.end());
  return s;
}

std::vector<std::string> gate_violations(const std::string& suite, const Gate& gate,
                                         const std::vector<GatedCase>& cases) {
  std::vector<std::string> out;
  std::vector<double> errors;
  for (const GatedCase& c : cases) {
    if (!c.abs_error) {
      out.push_back(fmt::format("{}: case {} has no simulated value ({})", suite, c.id, c.error));
      continue;
    }
    errors.push_back(*c.abs_error);
    if (gate.max_abs_error && *c.abs_error > *gate.max_abs_error) {
      out.push_back(fmt::format("{}: case {}: |error| {:.2f}% exceeds the {:.2f}% allowed for every case",
                                suite, c.id, 100 * *c.abs_error, 100 * *gate.max_abs_error));
    }
  }
  if (cases.empty()) out.push_back(fmt::format("{}: no scored case to gate on", suite));
  const ErrorSummary summary = summarize_errors(errors);
  if (!errors.empty() && summary.median_abs_error > gate.median_abs_error) {
    out.insert(out.begin(), fmt::format("{}: median |error| {:.2f}% exceeds {:.2f}%", suite,
                                        100 * summary.median_abs_error, 100 * gate.median_abs_error));
  }
  return out;
}

}  // namespace trainsim::validate
