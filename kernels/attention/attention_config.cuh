// The tile configuration of each instantiated kernel (one per head_dim), shared by the launchers
// and the CPU emulation tests so both run exactly the same code.
#ifndef TRAINSIM_KERNELS_ATTENTION_ATTENTION_CONFIG_CUH_
#define TRAINSIM_KERNELS_ATTENTION_ATTENTION_CONFIG_CUH_

#include "kernels/attention/attention_bwd_kernel.cuh"
#include "kernels/attention/attention_bwd_wgmma_kernel.cuh"
#include "kernels/attention/attention_fwd_kernel.cuh"
#include "kernels/attention/attention_fwd_wgmma_kernel.cuh"

namespace trainsim::kernels::attention_impl {

// Forward: 128 query rows per block over 4 warps (two 16-row mma tiles each, so every K/V fragment
// loaded from shared memory feeds two mma); 64 keys per tile, 32 at head_dim 128, where the output
// accumulator takes 128 registers per thread (64 keys spill on sm_90).
template <int kHeadDim>
using FwdConfig = FwdTraits<kHeadDim, 128, kHeadDim == 128 ? 32 : 64, 4>;

// Backward: 64 keys per block (16 per warp); 64 query rows per step, 32 at head_dim 128, where dK
// and dV take 128 registers per thread (64 rows spill).
template <int kHeadDim>
using BwdConfig = BwdTraits<kHeadDim, kHeadDim == 128 ? 32 : 64, 4>;

// Forward on sm_90a (attention_fwd_wgmma_kernel.cuh): 128 query rows, 128 keys per tile.
template <int kHeadDim>
using FwdWgmmaConfig = WgmmaFwdTraits<kHeadDim>;

// Backward on sm_90a (attention_bwd_wgmma_kernel.cuh): 128 keys per block, 64 query rows per step.
template <int kHeadDim>
using BwdWgmmaConfig = WgmmaBwdTraits<kHeadDim>;

// The delta kernel: 128 threads, kHeadDim / 8 per row.
constexpr int kDeltaThreads = 128;

// The merge kernel: head_dim / 4 threads per row (4 floats each), 128 threads per block.
constexpr int kMergeThreads = 128;

// Grids of the kernels; Traits is a forward (FwdConfig, FwdWgmmaConfig) or backward (BwdConfig,
// BwdWgmmaConfig) configuration.
template <typename Traits>
dim3 fwd_grid(const AttentionFwdParams& params) {
  return dim3(ceil_div(params.q_len, Traits::kBlockM), params.heads, params.batch);
}

template <typename Traits>
dim3 bwd_grid(const AttentionBwdParams& params) {
  return dim3(ceil_div(params.fwd.kv_len, Traits::kBlockN), params.fwd.kv_heads, params.fwd.batch);
}

template <int kHeadDim>
dim3 delta_grid(const AttentionBwdParams& params) {
  const int64_t rows = static_cast<int64_t>(params.fwd.batch) * params.fwd.heads * params.fwd.q_len;
  const int64_t rows_per_block = kDeltaThreads / (kHeadDim / 8);
  return dim3(static_cast<unsigned>((rows + rows_per_block - 1) / rows_per_block));
}

inline dim3 merge_grid(const MergeParams& params) {
  const int64_t threads =
      static_cast<int64_t>(params.batch) * params.q_len * params.heads * (params.head_dim / 4);
  return dim3(static_cast<unsigned>((threads + kMergeThreads - 1) / kMergeThreads));
}

}  // namespace trainsim::kernels::attention_impl

#endif  // TRAINSIM_KERNELS_ATTENTION_ATTENTION_CONFIG_CUH_
