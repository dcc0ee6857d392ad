// The launchers: checks, then the dispatch on (element type, head_dim).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "kernels/attention/attention_dispatch.h"
#include "kernels/attention/attention_launch.h"

namespace trainsim::kernels {

void attention_forward(const AttentionFwdParams& params, cudaStream_t stream) {
  check_supported(params);
  const bool bf16 = params.dtype == DataType::kBFloat16;
  if (params.head_dim == 64) {
    bf16 ? attention_impl::run_attention_fwd<__nv_bfloat16, 64>(params, stream)
         : attention_impl::run_attention_fwd<__half, 64>(params, stream);
  } else {
    bf16 ? attention_impl::run_attention_fwd<__nv_bfloat16, 128>(params, stream)
         : attention_impl::run_attention_fwd<__half, 128>(params, stream);
  }
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
