// Helpers shared by the kernel tests: seeded random tensors and error measures.
#ifndef TRAINSIM_TESTS_KERNELS_TEST_UTIL_H_
#define TRAINSIM_TESTS_KERNELS_TEST_UTIL_H_

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

namespace trainsim::kernels::testing {

// Uniform values in [-scale, scale], never exactly zero (so an unwritten output cannot pass).
template <typename T>
std::vector<T> random_tensor(int64_t elements, std::mt19937& rng, double scale = 1.0) {
  std::uniform_real_distribution<double> dist(-scale, scale);
  std::vector<T> values(static_cast<size_t>(elements));
  for (T& x : values) {
    double r = dist(rng);
    while (r == 0.0) {
      r = dist(rng);
    }
    x = static_cast<T>(r);
  }
  return values;
}

template <typename To, typename From>
std::vector<To> convert(const std::vector<From>& values) {
  return std::vector<To>(values.begin(), values.end());
}

// max |a - b| / max(max |b|, floor): the error relative to the tensor's scale.
template <typename A, typename B>
double relative_error(const std::vector<A>& a, const std::vector<B>& b, double floor = 1e-12) {
  double max_diff = 0.0;
  double max_ref = floor;
  for (size_t i = 0; i < a.size(); ++i) {
    const double x = static_cast<double>(a[i]);
    const double y = static_cast<double>(b[i]);
    if (std::isnan(x) || std::isnan(y)) {
      return INFINITY;
    }
    if (x == y) {  // also equal infinities (lse of a row that sees no key)
      continue;
    }
    max_diff = std::max(max_diff, std::abs(x - y));
    max_ref = std::max(max_ref, std::abs(y));
  }
  return max_diff / max_ref;
}

}  // namespace trainsim::kernels::testing

#endif  // TRAINSIM_TESTS_KERNELS_TEST_UTIL_H_
