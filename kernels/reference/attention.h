// CPU reference of one attention block (forward and backward), the oracle of the CUDA kernels and
// the CPU backend of the calibration harness. Plain loops with double accumulation; correct, not
// fast (O(q_len·kv_len·head_dim) per head, no tiling).
#ifndef TRAINSIM_KERNELS_REFERENCE_ATTENTION_H_
#define TRAINSIM_KERNELS_REFERENCE_ATTENTION_H_

#include <cstdint>
#include <span>
#include <vector>

#include "kernels/attention/attention_shape.h"

namespace trainsim::kernels::reference {

// Inputs of the forward pass, laid out as AttentionShape describes.
template <typename T>
struct ForwardInputs {
  std::span<const T> q;
  std::span<const T> k;
  std::span<const T> v;
};

// Inputs of the backward pass: the forward inputs, the forward results (out, lse) and the gradient
// of the loss with respect to out.
template <typename T>
struct BackwardInputs {
  std::span<const T> q;
  std::span<const T> k;
  std::span<const T> v;
  std::span<const T> out;
  std::span<const T> lse;
  std::span<const T> dout;
};

// Writes out [batch, q_len, heads, head_dim] and lse [batch, heads, q_len]. T is float (GPU
// verification, harness) or double (gradient checks). Throws std::invalid_argument when the shape is
// invalid or a span's size does not match it.
template <typename T>
void attention_forward(const AttentionShape& shape, const AttentionOptions& options,
                       const ForwardInputs<T>& in, std::span<T> out, std::span<T> lse);

// Overwrites dq, dk, dv with the gradients of sum(out ∘ dout), using the given out and lse as
// flash-attn's backward does (P = exp(scale·q·k - lse), D = rowsum(dout ∘ out)). Throws like
// attention_forward.
template <typename T>
void attention_backward(const AttentionShape& shape, const AttentionOptions& options,
                        const BackwardInputs<T>& in, std::span<T> dq, std::span<T> dk, std::span<T> dv);

// One output row: out[batch, row, head, :] and lse[batch, head, row], for spot checks of problems too
// large for the full reference.
struct ForwardRow {
  std::vector<double> out;
  double lse = 0.0;
};
template <typename T>
ForwardRow attention_forward_row(const AttentionShape& shape, const AttentionOptions& options,
                                 const ForwardInputs<T>& in, int64_t batch, int64_t head, int64_t row);

// dq[batch, row, head, :].
template <typename T>
std::vector<double> attention_backward_dq_row(const AttentionShape& shape, const AttentionOptions& options,
                                              const BackwardInputs<T>& in, int64_t batch, int64_t head,
                                              int64_t row);

// dk[batch, row, kv_head, :] and dv[batch, row, kv_head, :], summed over the query heads of the group.
struct KvRowGradients {
  std::vector<double> dk;
  std::vector<double> dv;
};
template <typename T>
KvRowGradients attention_backward_kv_row(const AttentionShape& shape, const AttentionOptions& options,
                                         const BackwardInputs<T>& in, int64_t batch, int64_t kv_head,
                                         int64_t row);

}  // namespace trainsim::kernels::reference

#endif  // TRAINSIM_KERNELS_REFERENCE_ATTENTION_H_
