// Shape of one layer's attention under FPDT (seed-papers.md A3-A5), shared by the CPU reference and
// the CUDA pipeline. CUDA-free.
#ifndef TRAINSIM_KERNELS_FPDT_FPDT_SHAPE_H_
#define TRAINSIM_KERNELS_FPDT_FPDT_SHAPE_H_

#include <cstdint>
#include <vector>

#include "kernels/attention/attention_shape.h"

namespace trainsim::kernels {

// One GPU's view after the Ulysses all-to-all: its local heads over the whole sequence, cut into u
// chunks. Global chunk i is the contiguous token range [chunk_start(i), chunk_start(i) +
// chunk_tokens[i]) (A3). DeepSpeed uses u equal chunks; any positive lengths are accepted here.
// Whole-sequence tensors are laid out as the attention block's, with S = total_tokens():
//   q, out, dout, dq [batch, S, heads, head_dim];  k, v, dk, dv [batch, S, kv_heads, head_dim];
//   lse [batch, heads, S].
struct FpdtShape {
  int64_t batch = 1;
  int64_t heads = 1;     // local query heads (H / P)
  int64_t kv_heads = 1;  // local key/value heads (Hkv / P)
  int64_t head_dim = 0;
  std::vector<int64_t> chunk_tokens;

  int64_t chunks() const { return static_cast<int64_t>(chunk_tokens.size()); }
  int64_t total_tokens() const;
  int64_t chunk_start(int64_t chunk) const;
  // The block (query chunk q_chunk) x (key/value chunk kv_chunk).
  AttentionShape block(int64_t q_chunk, int64_t kv_chunk) const;
  // The whole sequence as one block.
  AttentionShape whole() const;
};

// Throws std::invalid_argument when there is no chunk, a chunk length or size is not positive, or
// kv_heads does not divide heads.
void validate(const FpdtShape& shape);

// Where one chunk lies inside a whole-sequence tensor: `rows` runs of `run_elements` contiguous
// elements, the runs `pitch_elements` apart, the first at `offset_elements`. The chunk's own dense
// tensor is the runs laid end to end.
struct StridedRegion {
  int64_t offset_elements = 0;
  int64_t run_elements = 0;
  int64_t rows = 0;
  int64_t pitch_elements = 0;

  int64_t elements() const { return run_elements * rows; }
};

// Chunk `chunk` of a [batch, S, width] tensor (width = heads·head_dim or kv_heads·head_dim).
StridedRegion token_chunk_region(const FpdtShape& shape, int64_t chunk, int64_t width);
// Chunk `chunk` of a [batch, heads, S] tensor (the lse).
StridedRegion lse_chunk_region(const FpdtShape& shape, int64_t chunk);

}  // namespace trainsim::kernels

#endif  // TRAINSIM_KERNELS_FPDT_FPDT_SHAPE_H_
