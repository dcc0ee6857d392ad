// Host entry points of the attention kernels: parameter helpers, checks and launchers. Everything
// is enqueued on the caller's stream and returns at once; no call allocates.
#ifndef TRAINSIM_KERNELS_ATTENTION_ATTENTION_LAUNCH_H_
#define TRAINSIM_KERNELS_ATTENTION_ATTENTION_LAUNCH_H_

#include <cstdint>

#include <cuda_runtime_api.h>

#include "kernels/attention/attention_params.h"
#include "kernels/attention/attention_shape.h"
#include "kernels/data_type.h"

namespace trainsim::kernels {

// Strides of a dense [batch, seq, heads, head_dim] tensor.
TensorStrides dense_strides(int64_t seq, int64_t heads, int64_t head_dim);

// Params for dense device tensors laid out as AttentionShape describes; `dtype` is the element type
// of q, k, v and out (bf16 or fp16). Throws std::invalid_argument on an invalid shape.
AttentionFwdParams make_forward_params(const AttentionShape& shape, const AttentionOptions& options,
                                       DataType dtype, const void* q, const void* k, const void* v, void* out,
                                       float* lse);
// Backward params over the forward's tensors; dout is dense like out, the accumulators and the delta
// workspace (backward_delta_elements floats) as AttentionBwdParams describes.
AttentionBwdParams make_backward_params(const AttentionFwdParams& fwd, const void* dout, float* dq_accum,
                                        float* dk_accum, float* dv_accum, float* delta);
MergeParams make_merge_params(const AttentionRows& rows, DataType dtype, bool first, float* out, float* lse,
                              const void* block_out, const float* block_lse);

// Floats of the delta workspace of attention_backward: batch·heads·q_len.
int64_t backward_delta_elements(const AttentionFwdParams& fwd);

// Throw std::invalid_argument, naming the field, when the kernels cannot run these params: dtype
// not bf16/fp16, head_dim not 64 or 128, a size not positive, kv_heads not dividing heads, a
// pointer null or not 16-byte aligned, a stride not a multiple of 8 elements, a scale not positive
// and finite, or more heads or batches than a CUDA grid holds (65535).
void check_supported(const AttentionFwdParams& params);
void check_supported(const AttentionBwdParams& params);
void check_supported(const MergeParams& params);

// The implementations of attention_forward and attention_backward.
enum class AttentionKernel {
  kMmaSync,  // mma.sync tiles (sm_80 and later); verified on an H200, the default
  kWgmma,    // warpgroup MMA over whole tiles (sm_90a: H100, H200); checked on the CPU emulator only,
             // not yet on a GPU
};

// "mma.sync" or "wgmma".
const char* to_string(AttentionKernel kernel);

// True when `kernel` can run on the current device: kWgmma needs compute capability 9.0. Throws
// GpuError when the device cannot be queried.
bool attention_kernel_available(AttentionKernel kernel);
// Throws std::invalid_argument, naming the kernel, when it cannot run on the current device.
void check_available(AttentionKernel kernel);

// Launchers. Throw like check_supported, or GpuError when the launch fails (a kernel the device
// cannot run: std::invalid_argument). attention_backward runs the delta kernel, then the main kernel;
// it adds into the accumulators (zero them for a plain gradient).
void attention_forward(const AttentionFwdParams& params, cudaStream_t stream,
                       AttentionKernel kernel = AttentionKernel::kMmaSync);
void attention_backward(const AttentionBwdParams& params, cudaStream_t stream,
                        AttentionKernel kernel = AttentionKernel::kMmaSync);
void merge_attention(const MergeParams& params, cudaStream_t stream);

}  // namespace trainsim::kernels

#endif  // TRAINSIM_KERNELS_ATTENTION_ATTENTION_LAUNCH_H_
