// CPU reference of FPDT's chunked attention for one layer, following the loop structure of
// DeepSpeed's _FPDTGPUOffloadingAttentionImpl_ (seed-papers.md A4, A5) block for block. The chunk
// stores stand in for the pinned host buffers; the result must equal dense causal attention.
#ifndef TRAINSIM_KERNELS_REFERENCE_FPDT_H_
#define TRAINSIM_KERNELS_REFERENCE_FPDT_H_

#include <optional>
#include <span>

#include "kernels/fpdt/fpdt_shape.h"
#include "kernels/reference/attention.h"

namespace trainsim::kernels::reference {

// Forward (A4): for each query chunk i, the blocks (i, j) for j = 0..i in that order, the diagonal
// block causal, each merged into the running (out, lse) of chunk i. Inputs and outputs are
// whole-sequence tensors (FpdtShape); softmax_scale defaults to 1/sqrt(head_dim). Throws
// std::invalid_argument on an invalid shape or a size mismatch.
template <typename T>
void fpdt_forward(const FpdtShape& shape, std::optional<double> softmax_scale, const ForwardInputs<T>& in,
                  std::span<T> out, std::span<T> lse);

// Backward (A5): outer loop over key/value chunks i, inner loop over query chunks q = i..u-1 (the
// diagonal block causal). dk and dv of chunk i accumulate over the inner loop; dq of chunk q
// accumulates across outer iterations and is complete after outer iteration q. Overwrites dq, dk,
// dv. Throws like fpdt_forward.
template <typename T>
void fpdt_backward(const FpdtShape& shape, std::optional<double> softmax_scale, const BackwardInputs<T>& in,
                   std::span<T> dq, std::span<T> dk, std::span<T> dv);

}  // namespace trainsim::kernels::reference

#endif  // TRAINSIM_KERNELS_REFERENCE_FPDT_H_
