#include "kernels/reference/merge.h"

#include <stdexcept>
#include <string>

#include "kernels/attention/merge_math.h"

namespace trainsim::kernels::reference {

template <typename T>
void merge_attention(const AttentionRows& rows, bool first, std::span<T> out, std::span<T> lse,
                     std::span<const T> block_out, std::span<const T> block_lse) {
  if (static_cast<int64_t>(out.size()) != rows.out_elements() ||
      static_cast<int64_t>(block_out.size()) != rows.out_elements() ||
      static_cast<int64_t>(lse.size()) != rows.lse_elements() ||
      static_cast<int64_t>(block_lse.size()) != rows.lse_elements()) {
    throw std::invalid_argument("merge reference: tensor sizes do not match " + std::to_string(rows.batch) +
                                "x" + std::to_string(rows.q_len) + "x" + std::to_string(rows.heads) + "x" +
                                std::to_string(rows.head_dim));
  }
  for (int64_t b = 0; b < rows.batch; ++b) {
    for (int64_t h = 0; h < rows.heads; ++h) {
      for (int64_t i = 0; i < rows.q_len; ++i) {
        const int64_t lse_index = (b * rows.heads + h) * rows.q_len + i;
        const int64_t out_offset = ((b * rows.q_len + i) * rows.heads + h) * rows.head_dim;
        const MergeWeights<T> w = first ? MergeWeights<T>{T(0), T(1), block_lse[lse_index]}
                                        : merge_weights<T>(lse[lse_index], block_lse[lse_index]);
        for (int64_t d = 0; d < rows.head_dim; ++d) {
          T& o = out[out_offset + d];
          o = first ? block_out[out_offset + d]
                    : w.out_weight * o + w.block_weight * block_out[out_offset + d];
        }
        lse[lse_index] = w.lse;
      }
    }
  }
}

template void merge_attention<float>(const AttentionRows&, bool, std::span<float>, std::span<float>,
                                     std::span<const float>, std::span<const float>);
template void merge_attention<double>(const AttentionRows&, bool, std::span<double>, std::span<double>,
                                      std::span<const double>, std::span<const double>);

}  // namespace trainsim::kernels::reference
