// The attention launchers and convert_float for the fake CUDA runtime: the same checks as the real
// launchers, then the CPU references (for either kernel), enqueued on the caller's (deferred) stream.
#include <span>
#include <stdexcept>
#include <vector>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "kernels/attention/attention_launch.h"
#include "kernels/cuda/convert.h"
#include "kernels/reference/attention.h"
#include "kernels/reference/merge.h"
#include "tests/kernels/fake_cuda/fake_runtime.h"

namespace trainsim::kernels {

namespace {

float load(const void* base, int64_t index, DataType type) {
  if (type == DataType::kBFloat16) {
    return __bfloat162float(static_cast<const __nv_bfloat16*>(base)[index]);
  }
  return __half2float(static_cast<const __half*>(base)[index]);
}

void store(void* base, int64_t index, float value, DataType type) {
  if (type == DataType::kBFloat16) {
    static_cast<__nv_bfloat16*>(base)[index] = __float2bfloat16_rn(value);
  } else if (type == DataType::kFloat16) {
    static_cast<__half*>(base)[index] = __float2half_rn(value);
  } else {
    throw std::invalid_argument("fake convert_float: unsupported type");
  }
}

int64_t strided_index(const TensorStrides& strides, int64_t b, int64_t row, int64_t h, int64_t d) {
  return b * strides.batch + row * strides.row + h * strides.head + d;
}

// A strided [batch, rows, heads, head_dim] tensor as dense floats.
std::vector<float> gather(const void* data, const TensorStrides& strides, int64_t batch, int64_t rows,
                          int64_t heads, int64_t head_dim, DataType type) {
  std::vector<float> dense;
  dense.reserve(static_cast<size_t>(batch * rows * heads * head_dim));
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t h = 0; h < heads; ++h) {
        for (int64_t d = 0; d < head_dim; ++d) {
          dense.push_back(load(data, strided_index(strides, b, r, h, d), type));
        }
      }
    }
  }
  return dense;
}

AttentionShape shape_of(const AttentionFwdParams& p) {
  return {p.batch, p.q_len, p.kv_len, p.heads, p.kv_heads, p.head_dim};
}

void issue(fake_cuda::Issued::Kind kind, const AttentionFwdParams& p, cudaStream_t stream) {
  fake_cuda::issue_attention(
      {kind, 0, 0, p.batch, p.heads, p.kv_heads, p.q_len, p.kv_len, p.head_dim, p.causal}, stream);
}

}  // namespace

void check_available(AttentionKernel /*kernel*/) {}  // the fake device runs either kernel

void attention_forward(const AttentionFwdParams& params, cudaStream_t stream, AttentionKernel /*kernel*/) {
  check_supported(params);
  issue(fake_cuda::Issued::Kind::kAttentionForward, params, stream);
  fake_cuda::enqueue(stream, [p = params] {
    const AttentionShape s = shape_of(p);
    const std::vector<float> q = gather(p.q, p.q_strides, p.batch, p.q_len, p.heads, p.head_dim, p.dtype);
    const std::vector<float> k = gather(p.k, p.k_strides, p.batch, p.kv_len, p.kv_heads, p.head_dim, p.dtype);
    const std::vector<float> v = gather(p.v, p.v_strides, p.batch, p.kv_len, p.kv_heads, p.head_dim, p.dtype);
    std::vector<float> out(q.size());
    reference::attention_forward<float>(s, {p.causal, p.softmax_scale}, {q, k, v}, out,
                                        std::span<float>(p.lse, static_cast<size_t>(s.lse_elements())));
    int64_t i = 0;
    for (int64_t b = 0; b < p.batch; ++b) {
      for (int64_t r = 0; r < p.q_len; ++r) {
        for (int64_t h = 0; h < p.heads; ++h) {
          for (int64_t d = 0; d < p.head_dim; ++d) {
            store(p.out, strided_index(p.out_strides, b, r, h, d), out[i++], p.dtype);
          }
        }
      }
    }
  });
}

void attention_backward(const AttentionBwdParams& params, cudaStream_t stream, AttentionKernel /*kernel*/) {
  check_supported(params);
  issue(fake_cuda::Issued::Kind::kAttentionBackward, params.fwd, stream);
  fake_cuda::enqueue(stream, [bp = params] {
    const AttentionFwdParams& p = bp.fwd;
    const AttentionShape s = shape_of(p);
    const std::vector<float> q = gather(p.q, p.q_strides, p.batch, p.q_len, p.heads, p.head_dim, p.dtype);
    const std::vector<float> k = gather(p.k, p.k_strides, p.batch, p.kv_len, p.kv_heads, p.head_dim, p.dtype);
    const std::vector<float> v = gather(p.v, p.v_strides, p.batch, p.kv_len, p.kv_heads, p.head_dim, p.dtype);
    const std::vector<float> out =
        gather(p.out, p.out_strides, p.batch, p.q_len, p.heads, p.head_dim, p.dtype);
    const std::vector<float> dout =
        gather(bp.dout, bp.dout_strides, p.batch, p.q_len, p.heads, p.head_dim, p.dtype);
    const std::span<const float> lse(p.lse, static_cast<size_t>(s.lse_elements()));
    std::vector<float> dq(q.size()), dk(k.size()), dv(v.size());
    reference::attention_backward<float>(s, {p.causal, p.softmax_scale}, {q, k, v, out, lse, dout}, dq, dk,
                                         dv);
    for (size_t i = 0; i < dq.size(); ++i) {
      bp.dq_accum[i] += dq[i];
    }
    for (size_t i = 0; i < dk.size(); ++i) {
      bp.dk_accum[i] += dk[i];
      bp.dv_accum[i] += dv[i];
    }
  });
}

void merge_attention(const MergeParams& params, cudaStream_t stream) {
  check_supported(params);
  fake_cuda::enqueue(stream, [p = params] {
    const AttentionRows rows{p.batch, p.q_len, p.heads, p.head_dim};
    const std::vector<float> block =
        gather(p.block_out, p.block_out_strides, p.batch, p.q_len, p.heads, p.head_dim, p.dtype);
    reference::merge_attention<float>(
        rows, p.first, std::span<float>(p.out, static_cast<size_t>(rows.out_elements())),
        std::span<float>(p.lse, static_cast<size_t>(rows.lse_elements())), block,
        std::span<const float>(p.block_lse, static_cast<size_t>(rows.lse_elements())));
  });
}

void convert_float(const float* src, void* dst, DataType dst_type, int64_t count, cudaStream_t stream) {
  fake_cuda::enqueue(stream, [=] {
    for (int64_t i = 0; i < count; ++i) {
      store(dst, i, src[i], dst_type);
    }
  });
}

}  // namespace trainsim::kernels
