// The forward attention kernels for head_dim 128, bf16 and fp16.
#include "kernels/attention/attention_launch_template.cuh"

namespace trainsim::kernels::attention_impl {

template void run_attention_fwd<__nv_bfloat16, 128>(const AttentionFwdParams&, cudaStream_t);
template void run_attention_fwd<__half, 128>(const AttentionFwdParams&, cudaStream_t);

}  // namespace trainsim::kernels::attention_impl
