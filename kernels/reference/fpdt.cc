#include "kernels/reference/fpdt.h"

#include <algorithm>
#include <vector>

#include "kernels/reference/merge.h"
#include "kernels/reference/require_size.h"

namespace trainsim::kernels::reference {

namespace {

// Copies one chunk out of a whole-sequence tensor (what SequenceChunk keeps in pinned memory).
template <typename T>
std::vector<T> gather(std::span<const T> whole, const StridedRegion& region) {
  std::vector<T> chunk(static_cast<size_t>(region.elements()));
  for (int64_t r = 0; r < region.rows; ++r) {
    const auto first = whole.begin() + region.offset_elements + r * region.pitch_elements;
    std::copy(first, first + region.run_elements, chunk.begin() + r * region.run_elements);
  }
  return chunk;
}

template <typename T>
void scatter(const std::vector<T>& chunk, const StridedRegion& region, std::span<T> whole) {
  for (int64_t r = 0; r < region.rows; ++r) {
    const auto first = chunk.begin() + r * region.run_elements;
    std::copy(first, first + region.run_elements,
              whole.begin() + region.offset_elements + r * region.pitch_elements);
  }
}

template <typename T>
void accumulate(std::vector<T>& sum, const std::vector<T>& term) {
  std::transform(sum.begin(), sum.end(), term.begin(), sum.begin(), [](T a, T b) { return a + b; });
}

// Every chunk of one whole-sequence tensor.
template <typename T>
std::vector<std::vector<T>> split(const FpdtShape& shape, std::span<const T> whole, int64_t width) {
  std::vector<std::vector<T>> chunks;
  for (int64_t i = 0; i < shape.chunks(); ++i) {
    chunks.push_back(gather(whole, token_chunk_region(shape, i, width)));
  }
  return chunks;
}

template <typename T>
std::vector<std::vector<T>> split_lse(const FpdtShape& shape, std::span<const T> whole) {
  std::vector<std::vector<T>> chunks;
  for (int64_t i = 0; i < shape.chunks(); ++i) {
    chunks.push_back(gather(whole, lse_chunk_region(shape, i)));
  }
  return chunks;
}

}  // namespace

template <typename T>
void fpdt_forward(const FpdtShape& shape, std::optional<double> softmax_scale, const ForwardInputs<T>& in,
                  std::span<T> out, std::span<T> lse) {
  validate(shape);
  const AttentionShape whole = shape.whole();
  require_size(in.q, whole.q_elements(), "FPDT", "q");
  require_size(in.k, whole.kv_elements(), "FPDT", "k");
  require_size(in.v, whole.kv_elements(), "FPDT", "v");
  require_size(out, whole.q_elements(), "FPDT", "out");
  require_size(lse, whole.lse_elements(), "FPDT", "lse");
  const int64_t q_width = shape.heads * shape.head_dim;
  const int64_t kv_width = shape.kv_heads * shape.head_dim;
  const std::vector<std::vector<T>> k_chunks = split(shape, in.k, kv_width);
  const std::vector<std::vector<T>> v_chunks = split(shape, in.v, kv_width);
  for (int64_t i = 0; i < shape.chunks(); ++i) {
    const std::vector<T> q_chunk = gather(in.q, token_chunk_region(shape, i, q_width));
    std::vector<T> out_acc(q_chunk.size());
    std::vector<T> lse_acc(static_cast<size_t>(shape.batch * shape.heads * shape.chunk_tokens[i]));
    for (int64_t j = 0; j <= i; ++j) {
      const AttentionShape block = shape.block(i, j);
      const AttentionOptions options{j == i, softmax_scale};
      std::vector<T> block_out(out_acc.size());
      std::vector<T> block_lse(lse_acc.size());
      attention_forward<T>(block, options, {q_chunk, k_chunks[j], v_chunks[j]}, block_out, block_lse);
      merge_attention<T>(rows_of(block), j == 0, out_acc, lse_acc, block_out, block_lse);
    }
    scatter(out_acc, token_chunk_region(shape, i, q_width), out);
    scatter(lse_acc, lse_chunk_region(shape, i), lse);
  }
}

template <typename T>
void fpdt_backward(const FpdtShape& shape, std::optional<double> softmax_scale, const BackwardInputs<T>& in,
                   std::span<T> dq, std::span<T> dk, std::span<T> dv) {
  validate(shape);
  const AttentionShape whole = shape.whole();
  require_size(in.q, whole.q_elements(), "FPDT", "q");
  require_size(in.k, whole.kv_elements(), "FPDT", "k");
  require_size(in.v, whole.kv_elements(), "FPDT", "v");
  require_size(in.out, whole.q_elements(), "FPDT", "out");
  require_size(in.lse, whole.lse_elements(), "FPDT", "lse");
  require_size(in.dout, whole.q_elements(), "FPDT", "dout");
  require_size(dq, whole.q_elements(), "FPDT", "dq");
  require_size(dk, whole.kv_elements(), "FPDT", "dk");
  require_size(dv, whole.kv_elements(), "FPDT", "dv");
  const int64_t q_width = shape.heads * shape.head_dim;
  const int64_t kv_width = shape.kv_heads * shape.head_dim;
  const std::vector<std::vector<T>> q_chunks = split(shape, in.q, q_width);
  const std::vector<std::vector<T>> out_chunks = split(shape, in.out, q_width);
  const std::vector<std::vector<T>> dout_chunks = split(shape, in.dout, q_width);
  const std::vector<std::vector<T>> lse_chunks = split_lse(shape, in.lse);
  std::vector<std::vector<T>> dq_acc;
  for (const std::vector<T>& chunk : q_chunks) {
    dq_acc.emplace_back(chunk.size(), T(0));
  }
  for (int64_t i = 0; i < shape.chunks(); ++i) {
    const std::vector<T> k_chunk = gather(in.k, token_chunk_region(shape, i, kv_width));
    const std::vector<T> v_chunk = gather(in.v, token_chunk_region(shape, i, kv_width));
    std::vector<T> dk_acc(k_chunk.size(), T(0));
    std::vector<T> dv_acc(v_chunk.size(), T(0));
    for (int64_t q = i; q < shape.chunks(); ++q) {
      const AttentionShape block = shape.block(q, i);
      const AttentionOptions options{q == i, softmax_scale};
      std::vector<T> dq_block(q_chunks[q].size());
      std::vector<T> dk_block(k_chunk.size());
      std::vector<T> dv_block(v_chunk.size());
      attention_backward<T>(block, options,
                            {q_chunks[q], k_chunk, v_chunk, out_chunks[q], lse_chunks[q], dout_chunks[q]},
                            dq_block, dk_block, dv_block);
      accumulate(dq_acc[q], dq_block);
      accumulate(dk_acc, dk_block);
      accumulate(dv_acc, dv_block);
    }
    scatter(dq_acc[i], token_chunk_region(shape, i, q_width), dq);
    scatter(dk_acc, token_chunk_region(shape, i, kv_width), dk);
    scatter(dv_acc, token_chunk_region(shape, i, kv_width), dv);
  }
}

template void fpdt_forward<float>(const FpdtShape&, std::optional<double>, const ForwardInputs<float>&,
                                  std::span<float>, std::span<float>);
template void fpdt_forward<double>(const FpdtShape&, std::optional<double>, const ForwardInputs<double>&,
                                   std::span<double>, std::span<double>);
template void fpdt_backward<float>(const FpdtShape&, std::optional<double>, const BackwardInputs<float>&,
                                   std::span<float>, std::span<float>, std::span<float>);
template void fpdt_backward<double>(const FpdtShape&, std::optional<double>, const BackwardInputs<double>&,
                                    std::span<double>, std::span<double>, std::span<double>);

}  // namespace trainsim::kernels::reference
