// Plain parameter structs of the attention kernels (the flash-attn Flash_fwd_params pattern):
// pointers, strides and sizes, filled by attention_launch.h's make_* helpers or by hand. CUDA-free.
#ifndef TRAINSIM_KERNELS_ATTENTION_ATTENTION_PARAMS_H_
#define TRAINSIM_KERNELS_ATTENTION_ATTENTION_PARAMS_H_

#include <cstdint>

#include "kernels/data_type.h"

namespace trainsim::kernels {

// Strides, in elements, of a [batch, seq, heads, head_dim] tensor whose head_dim is contiguous.
struct TensorStrides {
  int64_t batch = 0;
  int64_t row = 0;  // between consecutive sequence positions
  int64_t head = 0;
};

// Forward of one block: out = softmax(scale·q·kᵀ, masked)·v and lse, per (batch, head).
// Inputs and out are `dtype` (bf16 or fp16); lse is fp32, dense [batch, heads, q_len].
struct AttentionFwdParams {
  const void* q = nullptr;
  const void* k = nullptr;
  const void* v = nullptr;
  void* out = nullptr;
  float* lse = nullptr;
  TensorStrides q_strides;
  TensorStrides k_strides;
  TensorStrides v_strides;
  TensorStrides out_strides;
  int batch = 0;
  int q_len = 0;
  int kv_len = 0;
  int heads = 0;
  int kv_heads = 0;
  int head_dim = 0;
  float softmax_scale = 0.0F;
  bool causal = false;
  DataType dtype = DataType::kBFloat16;
};

// Backward of one block, accumulating into fp32 buffers (FPDT accumulates dq, dk, dv over blocks):
//   dq_accum [batch, q_len, heads, head_dim]    += dL/dq   (atomic adds; other blocks may add too)
//   dk_accum, dv_accum [batch, kv_len, kv_heads, head_dim] += dL/dk, dL/dv
// all dense. delta is a workspace of batch·heads·q_len floats (rowsum(dout ∘ out)).
struct AttentionBwdParams {
  AttentionFwdParams fwd;  // q, k, v, out and lse as the forward produced them
  const void* dout = nullptr;
  TensorStrides dout_strides;
  float* dq_accum = nullptr;
  float* dk_accum = nullptr;
  float* dv_accum = nullptr;
  float* delta = nullptr;
};

// Merge of a block result into a running result (see merge_math.h):
//   out [batch, q_len, heads, head_dim] fp32 dense, lse [batch, heads, q_len] fp32 (in/out);
//   block_out `dtype` with block_out_strides, block_lse fp32 dense (in).
// With `first`, out and lse are overwritten with the block result.
struct MergeParams {
  float* out = nullptr;
  float* lse = nullptr;
  const void* block_out = nullptr;
  const float* block_lse = nullptr;
  TensorStrides block_out_strides;
  int batch = 0;
  int q_len = 0;
  int heads = 0;
  int head_dim = 0;
  bool first = false;
  DataType dtype = DataType::kBFloat16;
};

}  // namespace trainsim::kernels

#endif  // TRAINSIM_KERNELS_ATTENTION_ATTENTION_PARAMS_H_
