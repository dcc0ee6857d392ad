// The launchers: checks, then the dispatch on (kernel, element type, head_dim).
#include <stdexcept>
#include <string>
#include <type_traits>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "kernels/attention/attention_dispatch.h"
#include "kernels/attention/attention_launch.h"
#include "kernels/cuda/device.h"

namespace trainsim::kernels {

const char* to_string(AttentionKernel kernel) {
  return kernel == AttentionKernel::kWgmma ? "wgmma" : "mma.sync";
}

bool attention_kernel_available(AttentionKernel kernel) {
  if (kernel == AttentionKernel::kMmaSync) return true;
  const DeviceInfo device = device_info(current_device());
  return device.compute_major == 9 && device.compute_minor == 0;
}

void check_available(AttentionKernel kernel) {
  if (!attention_kernel_available(kernel)) {
    throw std::invalid_argument(std::string("the ") + to_string(kernel) +
                                " attention kernels need a compute capability 9.0 GPU (sm_90a)");
  }
}

namespace {

// Calls visit(element, head_dim) with a value of the element type and std::integral_constant of the
// head_dim: the instantiated (bf16/fp16, 64/128) pairs; check_supported has ruled out the rest.
template <typename Visit>
void dispatch(DataType dtype, int head_dim, Visit visit) {
  const bool bf16 = dtype == DataType::kBFloat16;
  if (head_dim == 64) {
    bf16 ? visit(__nv_bfloat16{}, std::integral_constant<int, 64>{})
         : visit(__half{}, std::integral_constant<int, 64>{});
  } else {
    bf16 ? visit(__nv_bfloat16{}, std::integral_constant<int, 128>{})
         : visit(__half{}, std::integral_constant<int, 128>{});
  }
}

}  // namespace

void attention_forward(const AttentionFwdParams& params, cudaStream_t stream, AttentionKernel kernel) {
  check_supported(params);
  check_available(kernel);
  dispatch(params.dtype, params.head_dim, [&](auto element, auto head_dim) {
    using Element = decltype(element);
    kernel == AttentionKernel::kWgmma
        ? attention_impl::run_attention_fwd_wgmma<Element, head_dim()>(params, stream)
        : attention_impl::run_attention_fwd<Element, head_dim()>(params, stream);
  });
}

void attention_backward(const AttentionBwdParams& params, cudaStream_t stream, AttentionKernel kernel) {
  check_supported(params);
  check_available(kernel);
  dispatch(params.fwd.dtype, params.fwd.head_dim, [&](auto element, auto head_dim) {
    using Element = decltype(element);
    kernel == AttentionKernel::kWgmma
        ? attention_impl::run_attention_bwd_wgmma<Element, head_dim()>(params, stream)
        : attention_impl::run_attention_bwd<Element, head_dim()>(params, stream);
  });
}

}  // namespace trainsim::kernels
