#include "kernels/fpdt/fpdt_shape.h"

#include <numeric>
#include <stdexcept>
#include <string>

namespace trainsim::kernels {

int64_t FpdtShape::total_tokens() const {
  return std::accumulate(chunk_tokens.begin(), chunk_tokens.end(), int64_t{0});
}

int64_t FpdtShape::chunk_start(int64_t chunk) const {
  return std::accumulate(chunk_tokens.begin(), chunk_tokens.begin() + chunk, int64_t{0});
}

AttentionShape FpdtShape::block(int64_t q_chunk, int64_t kv_chunk) const {
  return {batch, chunk_tokens.at(q_chunk), chunk_tokens.at(kv_chunk), heads, kv_heads, head_dim};
}

AttentionShape FpdtShape::whole() const {
  return {batch, total_tokens(), total_tokens(), heads, kv_heads, head_dim};
}

void validate(const FpdtShape& shape) {
  if (shape.chunk_tokens.empty()) {
    throw std::invalid_argument("FPDT shape: at least one chunk is needed");
  }
  for (size_t i = 0; i < shape.chunk_tokens.size(); ++i) {
    if (shape.chunk_tokens[i] <= 0) {
      throw std::invalid_argument("FPDT shape: chunk " + std::to_string(i) + " has " +
                                  std::to_string(shape.chunk_tokens[i]) + " tokens (must be positive)");
    }
  }
  validate(shape.whole());
}

StridedRegion token_chunk_region(const FpdtShape& shape, int64_t chunk, int64_t width) {
  return {shape.chunk_start(chunk) * width, shape.chunk_tokens.at(chunk) * width, shape.batch,
          shape.total_tokens() * width};
}

StridedRegion lse_chunk_region(const FpdtShape& shape, int64_t chunk) {
  return {shape.chunk_start(chunk), shape.chunk_tokens.at(chunk), shape.batch * shape.heads,
          shape.total_tokens()};
}

}  // namespace trainsim::kernels
