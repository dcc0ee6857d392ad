// Parameter helpers and checks of the attention kernels (plain C++: the launchers and the CPU
// tests of the FPDT pipeline share them).
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "kernels/attention/attention_launch.h"

namespace trainsim::kernels {

namespace {

constexpr int kMaxGridDimension = 65535;  // CUDA's limit for gridDim.y and gridDim.z

[[noreturn]] void reject(const char* what, const std::string& detail) {
  throw std::invalid_argument(std::string("attention: ") + what + ": " + detail);
}

void require(bool condition, const char* what, const std::string& detail) {
  if (!condition) {
    reject(what, detail);
  }
}

void require_aligned(const void* pointer, const char* name) {
  require(pointer != nullptr, name, "is null");
  require(reinterpret_cast<uintptr_t>(pointer) % 16 == 0, name, "is not 16-byte aligned");
}

void require_strides(const TensorStrides& strides, const char* name) {
  require(strides.batch % 8 == 0 && strides.row % 8 == 0 && strides.head % 8 == 0, name,
          "strides must be multiples of 8 elements (16-byte loads)");
}

void require_element_type(DataType dtype) {
  require(dtype == DataType::kBFloat16 || dtype == DataType::kFloat16, "dtype",
          std::string(name_of(dtype)) + " is not supported (bf16 or fp16)");
}

void require_head_dim(int head_dim) {
  require(head_dim == 64 || head_dim == 128, "head_dim", std::to_string(head_dim) + " is not 64 or 128");
}

}  // namespace

TensorStrides dense_strides(int64_t seq, int64_t heads, int64_t head_dim) {
  return {seq * heads * head_dim, heads * head_dim, head_dim};
}

AttentionFwdParams make_forward_params(const AttentionShape& shape, const AttentionOptions& options,
                                       DataType dtype, const void* q, const void* k, const void* v, void* out,
                                       float* lse) {
  validate(shape);
  AttentionFwdParams params;
  params.q = q;
  params.k = k;
  params.v = v;
  params.out = out;
  params.lse = lse;
  params.q_strides = dense_strides(shape.q_len, shape.heads, shape.head_dim);
  params.k_strides = dense_strides(shape.kv_len, shape.kv_heads, shape.head_dim);
  params.v_strides = params.k_strides;
  params.out_strides = params.q_strides;
  params.batch = static_cast<int>(shape.batch);
  params.q_len = static_cast<int>(shape.q_len);
  params.kv_len = static_cast<int>(shape.kv_len);
  params.heads = static_cast<int>(shape.heads);
  params.kv_heads = static_cast<int>(shape.kv_heads);
  params.head_dim = static_cast<int>(shape.head_dim);
  params.softmax_scale = static_cast<float>(options.scale_for(shape.head_dim));
  params.causal = options.causal;
  params.dtype = dtype;
  return params;
}

AttentionBwdParams make_backward_params(const AttentionFwdParams& fwd, const void* dout, float* dq_accum,
                                        float* dk_accum, float* dv_accum, float* delta) {
  AttentionBwdParams params;
  params.fwd = fwd;
  params.dout = dout;
  params.dout_strides = dense_strides(fwd.q_len, fwd.heads, fwd.head_dim);
  params.dq_accum = dq_accum;
  params.dk_accum = dk_accum;
  params.dv_accum = dv_accum;
  params.delta = delta;
  return params;
}

MergeParams make_merge_params(const AttentionRows& rows, DataType dtype, bool first, float* out, float* lse,
                              const void* block_out, const float* block_lse) {
  MergeParams params;
  params.out = out;
  params.lse = lse;
  params.block_out = block_out;
  params.block_lse = block_lse;
  params.block_out_strides = dense_strides(rows.q_len, rows.heads, rows.head_dim);
  params.batch = static_cast<int>(rows.batch);
  params.q_len = static_cast<int>(rows.q_len);
  params.heads = static_cast<int>(rows.heads);
  params.head_dim = static_cast<int>(rows.head_dim);
  params.first = first;
  params.dtype = dtype;
  return params;
}

int64_t backward_delta_elements(const AttentionFwdParams& fwd) {
  return static_cast<int64_t>(fwd.batch) * fwd.heads * fwd.q_len;
}

void check_supported(const AttentionFwdParams& params) {
  require_element_type(params.dtype);
  require_head_dim(params.head_dim);
  require(
      params.batch > 0 && params.q_len > 0 && params.kv_len > 0 && params.heads > 0 && params.kv_heads > 0,
      "sizes", "batch, q_len, kv_len, heads and kv_heads must be positive");
  require(params.heads % params.kv_heads == 0, "kv_heads",
          std::to_string(params.kv_heads) + " does not divide heads " + std::to_string(params.heads));
  require(params.heads <= kMaxGridDimension && params.kv_heads <= kMaxGridDimension &&
              params.batch <= kMaxGridDimension,
          "sizes", "heads and batch must not exceed 65535");
  require(std::isfinite(params.softmax_scale) && params.softmax_scale > 0.0F, "softmax_scale",
          "must be positive and finite");
  require_aligned(params.q, "q");
  require_aligned(params.k, "k");
  require_aligned(params.v, "v");
  require_aligned(params.out, "out");
  require_aligned(params.lse, "lse");
  require_strides(params.q_strides, "q");
  require_strides(params.k_strides, "k");
  require_strides(params.v_strides, "v");
  require_strides(params.out_strides, "out");
}

void check_supported(const AttentionBwdParams& params) {
  check_supported(params.fwd);
  require_aligned(params.dout, "dout");
  require_strides(params.dout_strides, "dout");
  require_aligned(params.dq_accum, "dq_accum");
  require_aligned(params.dk_accum, "dk_accum");
  require_aligned(params.dv_accum, "dv_accum");
  require_aligned(params.delta, "delta");
}

void check_supported(const MergeParams& params) {
  require_element_type(params.dtype);
  require_head_dim(params.head_dim);
  require(params.batch > 0 && params.q_len > 0 && params.heads > 0, "sizes",
          "batch, q_len and heads must be positive");
  require_aligned(params.out, "out");
  require_aligned(params.lse, "lse");
  require_aligned(params.block_out, "block_out");
  require_aligned(params.block_lse, "block_lse");
  require_strides(params.block_out_strides, "block_out");
}

}  // namespace trainsim::kernels
