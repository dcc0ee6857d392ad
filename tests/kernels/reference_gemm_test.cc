// The reference GEMM on the three layouts of a linear layer, against explicit transposes.
#include <random>
#include <stdexcept>
#include <vector>

#include <gtest/gtest.h>

#include "kernels/reference/gemm.h"
#include "tests/kernels/test_util.h"

namespace trainsim::kernels {
namespace {

using testing::random_tensor;

std::vector<double> transposed(const std::vector<double>& x, int64_t rows, int64_t cols) {
  std::vector<double> t(x.size());
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) {
      t[c * rows + r] = x[r * cols + c];
    }
  }
  return t;
}

// Textbook C[m,n] = A[m,k]·B[k,n].
std::vector<double> matmul(const std::vector<double>& a, const std::vector<double>& b, int64_t m, int64_t n,
                           int64_t k) {
  std::vector<double> c(static_cast<size_t>(m * n), 0.0);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      for (int64_t p = 0; p < k; ++p) {
        c[i * n + j] += a[i * k + p] * b[p * n + j];
      }
    }
  }
  return c;
}

TEST(ReferenceGemm, LinearLayerLayouts) {
  const int64_t tokens = 7, in = 5, out = 3;
  std::mt19937 rng(9);
  const auto x = random_tensor<double>(tokens * in, rng);
  const auto w = random_tensor<double>(out * in, rng);
  const auto dy = random_tensor<double>(tokens * out, rng);

  std::vector<double> y(static_cast<size_t>(tokens * out));
  reference::gemm<double>(linear_forward(tokens, in, out), 1.0, x, w, 0.0, {}, y);
  const auto y_expected = matmul(x, transposed(w, out, in), tokens, out, in);
  for (size_t i = 0; i < y.size(); ++i) {
    EXPECT_NEAR(y[i], y_expected[i], 1e-12);
  }

  std::vector<double> dx(static_cast<size_t>(tokens * in));
  reference::gemm<double>(linear_input_grad(tokens, in, out), 1.0, dy, w, 0.0, {}, dx);
  const auto dx_expected = matmul(dy, w, tokens, in, out);
  for (size_t i = 0; i < dx.size(); ++i) {
    EXPECT_NEAR(dx[i], dx_expected[i], 1e-12);
  }

  // Weight-gradient accumulation: dW = 0.5·dYᵀ·X + 2·dW_prev.
  const auto dw_prev = random_tensor<double>(out * in, rng);
  std::vector<double> dw(dw_prev.size());
  reference::gemm<double>(linear_weight_grad(tokens, in, out), 0.5, dy, x, 2.0, dw_prev, dw);
  const auto dw_expected = matmul(transposed(dy, tokens, out), x, out, in, tokens);
  for (size_t i = 0; i < dw.size(); ++i) {
    EXPECT_NEAR(dw[i], 0.5 * dw_expected[i] + 2.0 * dw_prev[i], 1e-12);
  }
  EXPECT_DOUBLE_EQ(linear_forward(tokens, in, out).flops(), 2.0 * tokens * in * out);
}

TEST(ReferenceGemm, RejectsSizeMismatch) {
  std::vector<float> a(6), b(6), d(3);
  EXPECT_THROW(reference::gemm<float>({2, 2, 3, false, false}, 1.0, a, b, 0.0, {}, d), std::invalid_argument);
}

}  // namespace
}  // namespace trainsim::kernels
