// CPU reference of the online-softmax merge of two partial attention results (FPDT's
// _update_out_and_lse, in the stable logsigmoid form of kernels/attention/merge_math.h).
#ifndef TRAINSIM_KERNELS_REFERENCE_MERGE_H_
#define TRAINSIM_KERNELS_REFERENCE_MERGE_H_

#include <span>

#include "kernels/attention/attention_shape.h"

namespace trainsim::kernels::reference {

// Merges a block result into the running result, in place, for every (batch, row, head):
//   (out, lse) <- combine((out, lse), (block_out, block_lse)).
// out, block_out: [batch, q_len, heads, head_dim]; lse, block_lse: [batch, heads, q_len]. When `first`
// is true, out and lse are overwritten with the block result instead (the running result is empty,
// as on FPDT's first block of a row). Throws std::invalid_argument when a span's size does not match.
template <typename T>
void merge_attention(const AttentionRows& rows, bool first, std::span<T> out, std::span<T> lse,
                     std::span<const T> block_out, std::span<const T> block_lse);

}  // namespace trainsim::kernels::reference

#endif  // TRAINSIM_KERNELS_REFERENCE_MERGE_H_
