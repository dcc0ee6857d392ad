// The sm_90a attention kernels (warpgroup MMA), forward and backward, head_dim 64 and 128, bf16 and
// fp16. This file is compiled for sm_90a only (kernels/CMakeLists.txt).
#include "kernels/attention/attention_launch_template.cuh"

namespace trainsim::kernels::attention_impl {

template void run_attention_fwd_wgmma<__nv_bfloat16, 64>(const AttentionFwdParams&, cudaStream_t);
template void run_attention_fwd_wgmma<__half, 64>(const AttentionFwdParams&, cudaStream_t);
template void run_attention_fwd_wgmma<__nv_bfloat16, 128>(const AttentionFwdParams&, cudaStream_t);
template void run_attention_fwd_wgmma<__half, 128>(const AttentionFwdParams&, cudaStream_t);
template void run_attention_bwd_wgmma<__nv_bfloat16, 64>(const AttentionBwdParams&, cudaStream_t);
template void run_attention_bwd_wgmma<__half, 64>(const AttentionBwdParams&, cudaStream_t);
template void run_attention_bwd_wgmma<__nv_bfloat16, 128>(const AttentionBwdParams&, cudaStream_t);
template void run_attention_bwd_wgmma<__half, 128>(const AttentionBwdParams&, cudaStream_t);

}  // namespace trainsim::kernels::attention_impl
