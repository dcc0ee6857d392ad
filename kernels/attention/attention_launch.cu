// The launchers: checks, then the dispatch on (kernel, element type, head_dim).
#include <stdexcept>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "kernels/attention/attention_dispatch.h"
#include "kernels/attention/attention_launch.h"
#include "kernels/cuda/device.h"

namespace trainsim::kernels {

const char* to_string(AttentionForwardKernel kernel) {
  return kernel == AttentionForwardKernel::kWgmma ? "wgmma" : "mma.sync";
}

bool attention_forward_kernel_available(AttentionForwardKernel kernel) {
  if (kernel == AttentionForwardKernel::kMmaSync) return true;
  const DeviceInfo device = device_info(current_device());
  return device.compute_major == 9 && device.compute_minor == 0;
}

void attention_forward(const AttentionFwdParams& params, cudaStream_t stream, AttentionForwardKernel kernel) {
  check_supported(params);
  const bool bf16 = params.dtype == DataType::kBFloat16;
  if (kernel == AttentionForwardKernel::kWgmma) {
    if (!attention_forward_kernel_available(kernel)) {
      throw std::invalid_argument("the wgmma attention forward needs a compute capability 9.0 GPU (sm_90a)");
    }
    if (params.head_dim == 64) {
      bf16 ? attention_impl::run_attention_fwd_wgmma<__nv_bfloat16, 64>(params, stream)
           : attention_impl::run_attention_fwd_wgmma<__half, 64>(params, stream);
    } else {
      bf16 ? attention_impl::run_attention_fwd_wgmma<__nv_bfloat16, 128>(params, stream)
           : attention_impl::run_attention_fwd_wgmma<__half, 128>(params, stream);
    }
    return;
  }
  if (params.head_dim == 64) {
    bf16 ? attention_impl::run_attention_fwd<__nv_bfloat16, 64>(params, stream)
         : attention_impl::run_attention_fwd<__half, 64>(params, stream);
  } else {
    bf16 ? attention_impl::run_attention_fwd<__nv_bfloat16, 128>(params, stream)
         : attention_impl::run_attention_fwd<__half, 128>(params, stream);
  }
}

void attention_forward(const AttentionFwdParams& params, cudaStream_t stream) {
  attention_forward(params, stream, AttentionForwardKernel::kMmaSync);
}

void attention_backward(const AttentionBwdParams& params, cudaStream_t stream) {
  check_supported(params);
  const bool bf16 = params.fwd.dtype == DataType::kBFloat16;
  if (params.fwd.head_dim == 64) {
    bf16 ? attention_impl::run_attention_bwd<__nv_bfloat16, 64>(params, stream)
         : attention_impl::run_attention_bwd<__half, 64>(params, stream);
  } else {
    bf16 ? attention_impl::run_attention_bwd<__nv_bfloat16, 128>(params, stream)
         : attention_impl::run_attention_bwd<__half, 128>(params, stream);
  }
}

}  // namespace trainsim::kernels
