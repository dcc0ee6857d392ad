// The backward attention kernels for head_dim 128, bf16 and fp16.
#include "kernels/attention/attention_launch_template.cuh"

namespace trainsim::kernels::attention_impl {

template void run_attention_bwd<__nv_bfloat16, 128>(const AttentionBwdParams&, cudaStream_t);
template void run_attention_bwd<__half, 128>(const AttentionBwdParams&, cudaStream_t);

}  // namespace trainsim::kernels::attention_impl
