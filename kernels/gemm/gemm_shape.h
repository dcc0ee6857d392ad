// Shape of one GEMM in row-major terms, shared by the CPU reference and the cuBLASLt wrapper.
// CUDA-free.
#ifndef TRAINSIM_KERNELS_GEMM_GEMM_SHAPE_H_
#define TRAINSIM_KERNELS_GEMM_GEMM_SHAPE_H_

#include <cstdint>

namespace trainsim::kernels {

// D[m, n] = alpha·op(A)·op(B) + beta·C[m, n], every matrix dense row-major. op(A) is [m, k]: A is
// stored [m, k], or [k, m] when transpose_a. op(B) is [k, n]: B is stored [k, n], or [n, k] when
// transpose_b. A transformer layer with activations X [tokens, in] and a weight W [out, in] uses:
//   forward          Y  = X·Wᵀ    m = tokens, n = out, k = in,     transpose_b
//   input gradient   dX = dY·W    m = tokens, n = in,  k = out
//   weight gradient  dW = dYᵀ·X   m = out,    n = in,  k = tokens, transpose_a
struct GemmShape {
  int64_t m = 0;
  int64_t n = 0;
  int64_t k = 0;
  bool transpose_a = false;
  bool transpose_b = false;

  // Elements of A, B and C as stored.
  int64_t a_elements() const { return m * k; }
  int64_t b_elements() const { return k * n; }
  int64_t c_elements() const { return m * n; }
  double flops() const {
    return 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  }
};

// The three GEMMs of a linear layer Y = X·Wᵀ with X [tokens, in] and W [out, in].
inline GemmShape linear_forward(int64_t tokens, int64_t in, int64_t out) {
  return {tokens, out, in, false, true};
}
inline GemmShape linear_input_grad(int64_t tokens, int64_t in, int64_t out) {
  return {tokens, in, out, false, false};
}
inline GemmShape linear_weight_grad(int64_t tokens, int64_t in, int64_t out) {
  return {out, in, tokens, true, false};
}

}  // namespace trainsim::kernels

#endif  // TRAINSIM_KERNELS_GEMM_GEMM_SHAPE_H_
