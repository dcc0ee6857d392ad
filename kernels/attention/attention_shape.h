// Shape and options of one attention block, shared by the CPU references and the CUDA launchers.
// CUDA-free: the CPU backend and the simulator-facing code include it without a toolkit.
#ifndef TRAINSIM_KERNELS_ATTENTION_ATTENTION_SHAPE_H_
#define TRAINSIM_KERNELS_ATTENTION_ATTENTION_SHAPE_H_

#include <cstdint>
#include <optional>

namespace trainsim::kernels {

// One attention block. Tensors are dense and row-major (the flash-attn layout):
//   q, out, dout, dq   [batch, q_len, heads, head_dim]
//   k, v, dk, dv       [batch, kv_len, kv_heads, head_dim]
//   lse                [batch, heads, q_len], natural-log log-sum-exp of the scaled scores
// Query head h reads key/value head h / (heads / kv_heads) (GQA: kv_heads divides heads).
struct AttentionShape {
  int64_t batch = 1;
  int64_t q_len = 0;
  int64_t kv_len = 0;
  int64_t heads = 1;
  int64_t kv_heads = 1;
  int64_t head_dim = 0;

  int64_t q_elements() const { return batch * q_len * heads * head_dim; }
  int64_t kv_elements() const { return batch * kv_len * kv_heads * head_dim; }
  int64_t lse_elements() const { return batch * heads * q_len; }
  // Query heads per key/value head.
  int64_t group_size() const { return heads / kv_heads; }
};

// The query-side rows of a block: out [batch, q_len, heads, head_dim] and lse [batch, heads, q_len].
// The merge works on these alone.
struct AttentionRows {
  int64_t batch = 1;
  int64_t q_len = 0;
  int64_t heads = 1;
  int64_t head_dim = 0;

  int64_t out_elements() const { return batch * q_len * heads * head_dim; }
  int64_t lse_elements() const { return batch * heads * q_len; }
};

inline AttentionRows rows_of(const AttentionShape& shape) {
  return {shape.batch, shape.q_len, shape.heads, shape.head_dim};
}

// Throws std::invalid_argument naming the offending field when a size is not positive or kv_heads
// does not divide heads.
void validate(const AttentionShape& shape);

struct AttentionOptions {
  // Causal mask aligned to the bottom-right corner (see key_visible).
  bool causal = false;
  // Factor applied to q·k before the softmax; 1/sqrt(head_dim) when empty.
  std::optional<double> softmax_scale;

  double scale_for(int64_t head_dim) const;
};

// The mask convention of every kernel and reference here, flash-attn's (>= 2.1): with the causal
// mask, query i sees key j iff j <= i + kv_len - q_len. FPDT's diagonal blocks have q_len == kv_len,
// where this is the usual j <= i. A row that sees no key (possible only when q_len > kv_len) has
// out = 0 and lse = -inf.
constexpr bool key_visible(bool causal, int64_t i, int64_t j, int64_t q_len, int64_t kv_len) {
  return !causal || j <= i + kv_len - q_len;
}

// Number of visible (query, key) pairs per batch and head.
int64_t visible_pairs(const AttentionShape& shape, bool causal);

// Useful floating-point operations of the forward pass (two GEMMs, 4·pairs·head_dim per head) and
// of the backward pass (five GEMMs, 10·pairs·head_dim per head): the flash-attn accounting.
double attention_forward_flops(const AttentionShape& shape, bool causal);
double attention_backward_flops(const AttentionShape& shape, bool causal);

}  // namespace trainsim::kernels

#endif  // TRAINSIM_KERNELS_ATTENTION_ATTENTION_SHAPE_H_
