// The per-(element type, head_dim) launch functions; each attention_{fwd,bwd}_hdim*.cu instantiates
// them for bf16 and fp16 (one translation unit per head_dim keeps the build parallel).
#ifndef TRAINSIM_KERNELS_ATTENTION_ATTENTION_DISPATCH_H_
#define TRAINSIM_KERNELS_ATTENTION_ATTENTION_DISPATCH_H_

#include <cuda_runtime_api.h>

#include "kernels/attention/attention_params.h"

namespace trainsim::kernels::attention_impl {

template <typename Element, int kHeadDim>
void run_attention_fwd(const AttentionFwdParams& params, cudaStream_t stream);

// The sm_90a kernels (attention_wgmma.cu, built for sm_90a only).
template <typename Element, int kHeadDim>
void run_attention_fwd_wgmma(const AttentionFwdParams& params, cudaStream_t stream);
template <typename Element, int kHeadDim>
void run_attention_bwd_wgmma(const AttentionBwdParams& params, cudaStream_t stream);

template <typename Element, int kHeadDim>
void run_attention_bwd(const AttentionBwdParams& params, cudaStream_t stream);

}  // namespace trainsim::kernels::attention_impl

#endif  // TRAINSIM_KERNELS_ATTENTION_ATTENTION_DISPATCH_H_
