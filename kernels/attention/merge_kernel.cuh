// The merge kernel: folds one block's (out, lse) into the running fp32 (out, lse) with the stable
// weights of merge_math.h. head_dim / 4 threads per row (4 floats each); the first thread of a
// row alone reads and writes the lse, and hands the weights to the others by shuffle.
#ifndef TRAINSIM_KERNELS_ATTENTION_MERGE_KERNEL_CUH_
#define TRAINSIM_KERNELS_ATTENTION_MERGE_KERNEL_CUH_

#include <cstdint>

#include "kernels/attention/attention_params.h"
#include "kernels/attention/merge_math.h"
#include "kernels/cuda/element.cuh"

namespace trainsim::kernels::attention_impl {

template <typename Element>
__global__ void merge_kernel(const MergeParams params) {
  const int threads_per_row = params.head_dim / 4;  // divides 32: rows never straddle a warp
  const int64_t rows = static_cast<int64_t>(params.batch) * params.q_len * params.heads;
  const int64_t row = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / threads_per_row;
  const int sub = static_cast<int>(threadIdx.x) % threads_per_row;
  const int leader = static_cast<int>(threadIdx.x & 31) - sub;
  const bool valid = row < rows;
  // row = (b·q_len + i)·heads + h, the order of out's rows.
  const int64_t h = row % params.heads;
  const int64_t i = (row / params.heads) % params.q_len;
  const int64_t b = row / (static_cast<int64_t>(params.heads) * params.q_len);
  const int64_t lse_index = (b * params.heads + h) * params.q_len + i;

  float out_weight = 0.0F;
  float block_weight = 1.0F;
  float new_lse = 0.0F;
  if (valid && sub == 0) {
    const float block_lse = params.block_lse[lse_index];
    new_lse = block_lse;
    if (!params.first) {
      const MergeWeights<float> w = merge_weights<float>(params.lse[lse_index], block_lse);
      out_weight = w.out_weight;
      block_weight = w.block_weight;
      new_lse = w.lse;
    }
  }
  out_weight = __shfl_sync(0xffffffffU, out_weight, leader);
  block_weight = __shfl_sync(0xffffffffU, block_weight, leader);
  if (!valid) {
    return;
  }
  const Element* block = static_cast<const Element*>(params.block_out) + b * params.block_out_strides.batch +
                         i * params.block_out_strides.row + h * params.block_out_strides.head + sub * 4;
  const uint2 block_bits = *reinterpret_cast<const uint2*>(block);
  const Element* block_values = reinterpret_cast<const Element*>(&block_bits);
  float4* out = reinterpret_cast<float4*>(params.out + row * params.head_dim + sub * 4);
  // The first block overwrites: the running output may hold anything, even NaN.
  const float4 running = params.first ? float4{0.0F, 0.0F, 0.0F, 0.0F} : *out;
  using Traits = ElementTraits<Element>;
  *out = float4{out_weight * running.x + block_weight * Traits::to_float(block_values[0]),
                out_weight * running.y + block_weight * Traits::to_float(block_values[1]),
                out_weight * running.z + block_weight * Traits::to_float(block_values[2]),
                out_weight * running.w + block_weight * Traits::to_float(block_values[3])};
  if (sub == 0) {
    params.lse[lse_index] = new_lse;
  }
}

}  // namespace trainsim::kernels::attention_impl

#endif  // TRAINSIM_KERNELS_ATTENTION_MERGE_KERNEL_CUH_
