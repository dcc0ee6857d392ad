#include "kernels/attention/attention_shape.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace trainsim::kernels {

namespace {

void require_positive(int64_t value, const char* field) {
  if (value <= 0) {
    throw std::invalid_argument(std::string("attention shape: ") + field + " must be positive (got " +
                                std::to_string(value) + ")");
  }
}

}  // namespace

void validate(const AttentionShape& shape) {
  require_positive(shape.batch, "batch");
  require_positive(shape.q_len, "q_len");
  require_positive(shape.kv_len, "kv_len");
  require_positive(shape.heads, "heads");
  require_positive(shape.kv_heads, "kv_heads");
  require_positive(shape.head_dim, "head_dim");
  if (shape.heads % shape.kv_heads != 0) {
    throw std::invalid_argument("attention shape: kv_heads (" + std::to_string(shape.kv_heads) +
                                ") must divide heads (" + std::to_string(shape.heads) + ")");
  }
}

double AttentionOptions::scale_for(int64_t head_dim) const {
  return softmax_scale.value_or(1.0 / std::sqrt(static_cast<double>(head_dim)));
}

int64_t visible_pairs(const AttentionShape& shape, bool causal) {
  if (!causal) {
    return shape.q_len * shape.kv_len;
  }
  int64_t pairs = 0;
  for (int64_t i = 0; i < shape.q_len; ++i) {
    pairs += std::clamp<int64_t>(i + shape.kv_len - shape.q_len + 1, 0, shape.kv_len);
  }
  return pairs;
}

double attention_forward_flops(const AttentionShape& shape, bool causal) {
  return 4.0 * static_cast<double>(shape.batch * shape.heads * shape.head_dim) *
         static_cast<double>(visible_pairs(shape, causal));
}

double attention_backward_flops(const AttentionShape& shape, bool causal) {
  return 2.5 * attention_forward_flops(shape, causal);
}

}  // namespace trainsim::kernels
