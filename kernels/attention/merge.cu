// Launcher of the merge kernel.
#include <cuda_runtime.h>

#include "kernels/attention/attention_config.cuh"
#include "kernels/attention/attention_launch.h"
#include "kernels/attention/merge_kernel.cuh"
#include "kernels/cuda/check.h"

namespace trainsim::kernels {

void merge_attention(const MergeParams& params, cudaStream_t stream) {
  check_supported(params);
  const dim3 blocks = attention_impl::merge_grid(params);
  if (params.dtype == DataType::kBFloat16) {
    attention_impl::merge_kernel<__nv_bfloat16><<<blocks, attention_impl::kMergeThreads, 0, stream>>>(params);
  } else {
    attention_impl::merge_kernel<__half><<<blocks, attention_impl::kMergeThreads, 0, stream>>>(params);
  }
  CUDA_CHECK_LAUNCH();
}

}  // namespace trainsim::kernels
