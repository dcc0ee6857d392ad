// CPU reference GEMM (the oracle of the cuBLASLt wrapper), double accumulation.
#ifndef TRAINSIM_KERNELS_REFERENCE_GEMM_H_
#define TRAINSIM_KERNELS_REFERENCE_GEMM_H_

#include <span>

#include "kernels/gemm/gemm_shape.h"

namespace trainsim::kernels::reference {

// d = alpha·op(a)·op(b) + beta·c as GemmShape defines it; c is not read when beta is 0, and d may
// alias c. Throws std::invalid_argument when a size is not positive or a span's size does not match.
template <typename T>
void gemm(const GemmShape& shape, double alpha, std::span<const T> a, std::span<const T> b, double beta,
          std::span<const T> c, std::span<T> d);

}  // namespace trainsim::kernels::reference

#endif  // TRAINSIM_KERNELS_REFERENCE_GEMM_H_
