// Definitions of the per-(element type, head_dim) launch functions: grid, block, shared memory.
#ifndef TRAINSIM_KERNELS_ATTENTION_ATTENTION_LAUNCH_TEMPLATE_CUH_
#define TRAINSIM_KERNELS_ATTENTION_ATTENTION_LAUNCH_TEMPLATE_CUH_

#include <cuda_runtime.h>

#include "kernels/attention/attention_config.cuh"
#include "kernels/attention/attention_dispatch.h"
#include "kernels/cuda/check.h"

namespace trainsim::kernels::attention_impl {

// Allows `kernel` more than the default 48 KiB of dynamic shared memory.
template <typename Kernel>
void allow_shared_memory(Kernel kernel, int bytes) {
  CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
}

template <typename Element, int kHeadDim>
void run_attention_fwd(const AttentionFwdParams& params, cudaStream_t stream) {
  using Traits = FwdConfig<kHeadDim>;
  const auto kernel = attention_fwd_kernel<Element, Traits>;
  allow_shared_memory(kernel, Traits::kSmemBytes);
  kernel<<<fwd_grid<kHeadDim>(params), Traits::kThreads, Traits::kSmemBytes, stream>>>(params);
  CUDA_CHECK_LAUNCH();
}

template <typename Element, int kHeadDim>
void run_attention_fwd_wgmma(const AttentionFwdParams& params, cudaStream_t stream) {
  using Traits = FwdWgmmaConfig<kHeadDim>;
  const auto kernel = attention_fwd_wgmma_kernel<Element, Traits>;
  allow_shared_memory(kernel, Traits::kSmemBytes);
  kernel<<<fwd_wgmma_grid<kHeadDim>(params), Traits::kThreads, Traits::kSmemBytes, stream>>>(params);
  CUDA_CHECK_LAUNCH();
}

template <typename Element, int kHeadDim>
void run_attention_bwd_wgmma(const AttentionBwdParams& params, cudaStream_t stream) {
  attention_bwd_delta_kernel<Element, kHeadDim>
      <<<delta_grid<kHeadDim>(params), kDeltaThreads, 0, stream>>>(params);
  CUDA_CHECK_LAUNCH();

  using Traits = BwdWgmmaConfig<kHeadDim>;
  const auto kernel = attention_bwd_wgmma_kernel<Element, Traits>;
  allow_shared_memory(kernel, Traits::kSmemBytes);
  kernel<<<bwd_wgmma_grid<kHeadDim>(params), Traits::kThreads, Traits::kSmemBytes, stream>>>(params);
  CUDA_CHECK_LAUNCH();
}

template <typename Element, int kHeadDim>
void run_attention_bwd(const AttentionBwdParams& params, cudaStream_t stream) {
  attention_bwd_delta_kernel<Element, kHeadDim>
      <<<delta_grid<kHeadDim>(params), kDeltaThreads, 0, stream>>>(params);
  CUDA_CHECK_LAUNCH();

  using Traits = BwdConfig<kHeadDim>;
  const auto kernel = attention_bwd_kernel<Element, Traits>;
  allow_shared_memory(kernel, Traits::kSmemBytes);
  kernel<<<bwd_grid<kHeadDim>(params), Traits::kThreads, Traits::kSmemBytes, stream>>>(params);
  CUDA_CHECK_LAUNCH();
}

}  // namespace trainsim::kernels::attention_impl

#endif  // TRAINSIM_KERNELS_ATTENTION_ATTENTION_LAUNCH_TEMPLATE_CUH_
