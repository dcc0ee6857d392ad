// The numerically stable merge of two partial attention results over disjoint key sets, shared by
// the CPU reference (double) and the CUDA merge kernel (float).
#ifndef TRAINSIM_KERNELS_ATTENTION_MERGE_MATH_H_
#define TRAINSIM_KERNELS_ATTENTION_MERGE_MATH_H_

#include <cmath>

#include "kernels/host_device.h"

namespace trainsim::kernels {

// Weights that merge a running result (out, lse) with a block result (block_out, block_lse):
//   lse'  = log(exp(lse) + exp(block_lse)) = lse - logsigmoid(lse - block_lse)
//   out'  = out_weight·out + block_weight·block_out,
//           out_weight = sigmoid(lse - block_lse), block_weight = sigmoid(block_lse - lse)
// This is ring-flash-attn's logsigmoid form: only exp(-|x|) <= 1 is ever evaluated, so it is exact
// for any finite lse difference, where DeepSpeed's lse + log1p(exp(block_lse - lse)) overflows once
// the difference exceeds ~88 in fp32. A side with lse = -inf (no visible key) contributes nothing.
template <typename T>
struct MergeWeights {
  T out_weight;
  T block_weight;
  T lse;
};

template <typename T>
TRAINSIM_HOST_DEVICE inline MergeWeights<T> merge_weights(T lse, T block_lse) {
  using std::exp;
  using std::fabs;
  using std::log1p;
  if (block_lse == -static_cast<T>(INFINITY)) {
    return {T(1), T(0), lse};
  }
  if (lse == -static_cast<T>(INFINITY)) {
    return {T(0), T(1), block_lse};
  }
  const T x = lse - block_lse;
  const T e = exp(-fabs(x));                 // in (0, 1]
  const T sigmoid_abs = T(1) / (T(1) + e);   // sigmoid(|x|)
  const T sigmoid_neg_abs = e / (T(1) + e);  // sigmoid(-|x|)
  const T log_sigmoid_x = (x < T(0) ? x : T(0)) - log1p(e);
  if (x >= T(0)) {
    return {sigmoid_abs, sigmoid_neg_abs, lse - log_sigmoid_x};
  }
  return {sigmoid_neg_abs, sigmoid_abs, lse - log_sigmoid_x};
}

}  // namespace trainsim::kernels

#endif  // TRAINSIM_KERNELS_ATTENTION_MERGE_MATH_H_
