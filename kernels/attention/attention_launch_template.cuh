// Definitions of the per-(element type, head_dim) launch functions: grid, block, shared memory.
#ifndef TRAINSIM_KERNELS_ATTENTION_ATTENTION_LAUNCH_TEMPLATE_CUH_
#define TRAINSIM_KERNELS_ATTENTION_ATTENTION_LAUNCH_TEMPLATE_CUH_

#include <cuda_runtime.h>

#include "kernels/attention/attention_config.cuh"
#include "kernels/attention/attention_dispatch.h"
#include "kernels/cuda/check.h"

namespace trainsim::kernels::attention_impl {

// Launches `kernel` (a kernel of configuration Traits) over `grid`, allowing it Traits::kSmemBytes
// of dynamic shared memory (more than the default 48 KiB).
template <typename Traits, typename Params>
void launch(void (*kernel)(Params), dim3 grid, const Params& params, cudaStream_t stream) {
  CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, Traits::kSmemBytes));
  kernel<<<grid, Traits::kThreads, Traits::kSmemBytes, stream>>>(params);
  CUDA_CHECK_LAUNCH();
}

// delta = rowsum(dout ∘ out), the first kernel of every backward.
template <typename Element, int kHeadDim>
void launch_delta(const AttentionBwdParams& params, cudaStream_t stream) {
  attention_bwd_delta_kernel<Element, kHeadDim>
      <<<delta_grid<kHeadDim>(params), kDeltaThreads, 0, stream>>>(params);
  CUDA_CHECK_LAUNCH();
}

template <typename Element, int kHeadDim>
void run_attention_fwd(const AttentionFwdParams& params, cudaStream_t stream) {
  using Traits = FwdConfig<kHeadDim>;
  launch<Traits>(attention_fwd_kernel<Element, Traits>, fwd_grid<Traits>(params), params, stream);
}

template <typename Element, int kHeadDim>
void run_attention_fwd_wgmma(const AttentionFwdParams& params, cudaStream_t stream) {
  using Traits = FwdWgmmaConfig<kHeadDim>;
  launch<Traits>(attention_fwd_wgmma_kernel<Element, Traits>, fwd_grid<Traits>(params), params, stream);
}

template <typename Element, int kHeadDim>
void run_attention_bwd(const AttentionBwdParams& params, cudaStream_t stream) {
  launch_delta<Element, kHeadDim>(params, stream);
  using Traits = BwdConfig<kHeadDim>;
  launch<Traits>(attention_bwd_kernel<Element, Traits>, bwd_grid<Traits>(params), params, stream);
}

template <typename Element, int kHeadDim>
void run_attention_bwd_wgmma(const AttentionBwdParams& params, cudaStream_t stream) {
  launch_delta<Element, kHeadDim>(params, stream);
  using Traits = BwdWgmmaConfig<kHeadDim>;
  launch<Traits>(attention_bwd_wgmma_kernel<Element, Traits>, bwd_grid<Traits>(params), params, stream);
}

}  // namespace trainsim::kernels::attention_impl

#endif  // TRAINSIM_KERNELS_ATTENTION_ATTENTION_LAUNCH_TEMPLATE_CUH_
