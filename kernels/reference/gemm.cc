#include "kernels/reference/gemm.h"

#include <stdexcept>
#include <string>
#include <vector>

namespace trainsim::kernels::reference {

template <typename T>
void gemm(const GemmShape& shape, double alpha, std::span<const T> a, std::span<const T> b, double beta,
          std::span<const T> c, std::span<T> d) {
  if (shape.m <= 0 || shape.n <= 0 || shape.k <= 0) {
    throw std::invalid_argument("GEMM reference: m, n, k must be positive");
  }
  if (static_cast<int64_t>(a.size()) != shape.a_elements() ||
      static_cast<int64_t>(b.size()) != shape.b_elements() ||
      static_cast<int64_t>(d.size()) != shape.c_elements() ||
      (beta != 0.0 && static_cast<int64_t>(c.size()) != shape.c_elements())) {
    throw std::invalid_argument("GEMM reference: operand sizes do not match m=" + std::to_string(shape.m) +
                                " n=" + std::to_string(shape.n) + " k=" + std::to_string(shape.k));
  }
  std::vector<double> row(static_cast<size_t>(shape.n));
  for (int64_t i = 0; i < shape.m; ++i) {
    std::fill(row.begin(), row.end(), 0.0);
    for (int64_t p = 0; p < shape.k; ++p) {
      const double a_ip = static_cast<double>(shape.transpose_a ? a[p * shape.m + i] : a[i * shape.k + p]);
      for (int64_t j = 0; j < shape.n; ++j) {
        row[j] += a_ip * static_cast<double>(shape.transpose_b ? b[j * shape.k + p] : b[p * shape.n + j]);
      }
    }
    for (int64_t j = 0; j < shape.n; ++j) {
      const double prior = beta == 0.0 ? 0.0 : beta * static_cast<double>(c[i * shape.n + j]);
      d[i * shape.n + j] = static_cast<T>(alpha * row[j] + prior);
    }
  }
}

template void gemm<float>(const GemmShape&, double, std::span<const float>, std::span<const float>, double,
                          std::span<const float>, std::span<float>);
template void gemm<double>(const GemmShape&, double, std::span<const double>, std::span<const double>, double,
                           std::span<const double>, std::span<double>);

}  // namespace trainsim::kernels::reference
