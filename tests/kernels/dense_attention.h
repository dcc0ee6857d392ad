// An independent dense softmax attention (materialises the full score matrix) used as the oracle of
// the chunked FPDT reference: its backward uses rowsum(P ∘ dP) where the block reference uses
// rowsum(dout ∘ out), so the two share no code path beyond the input layout.
#ifndef TRAINSIM_TESTS_KERNELS_DENSE_ATTENTION_H_
#define TRAINSIM_TESTS_KERNELS_DENSE_ATTENTION_H_

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "kernels/attention/attention_shape.h"

namespace trainsim::kernels::testing {

struct DenseResult {
  std::vector<double> out;  // [batch, q_len, heads, head_dim]
  std::vector<double> lse;  // [batch, heads, q_len]
  std::vector<double> dq;   // filled by dense_attention when dout is given
  std::vector<double> dk;
  std::vector<double> dv;
};

// Dense (optionally causal) attention with gradients of sum(out ∘ dout); dout may be empty.
inline DenseResult dense_attention(const AttentionShape& s, bool causal, double scale,
                                   const std::vector<double>& q, const std::vector<double>& k,
                                   const std::vector<double>& v, const std::vector<double>& dout) {
  const int64_t d_len = s.head_dim;
  auto qi = [&](int64_t b, int64_t i, int64_t h) { return ((b * s.q_len + i) * s.heads + h) * d_len; };
  auto ki = [&](int64_t b, int64_t j, int64_t h) { return ((b * s.kv_len + j) * s.kv_heads + h) * d_len; };
  DenseResult r{std::vector<double>(q.size(), 0.0), std::vector<double>(s.lse_elements(), 0.0),
                std::vector<double>(q.size(), 0.0), std::vector<double>(k.size(), 0.0),
                std::vector<double>(v.size(), 0.0)};
  std::vector<double> p(static_cast<size_t>(s.q_len * s.kv_len));
  std::vector<double> dp(p.size());
  for (int64_t b = 0; b < s.batch; ++b) {
    for (int64_t h = 0; h < s.heads; ++h) {
      const int64_t hk = h / (s.heads / s.kv_heads);
      for (int64_t i = 0; i < s.q_len; ++i) {
        double row_max = -std::numeric_limits<double>::infinity();
        for (int64_t j = 0; j < s.kv_len; ++j) {
          double x = -std::numeric_limits<double>::infinity();
          if (key_visible(causal, i, j, s.q_len, s.kv_len)) {
            x = 0.0;
            for (int64_t d = 0; d < d_len; ++d) {
              x += q[qi(b, i, h) + d] * k[ki(b, j, hk) + d];
            }
            x *= scale;
          }
          p[i * s.kv_len + j] = x;
          row_max = std::max(row_max, x);
        }
        double sum = 0.0;
        for (int64_t j = 0; j < s.kv_len; ++j) {
          double& x = p[i * s.kv_len + j];
          x = row_max == -std::numeric_limits<double>::infinity() ? 0.0 : std::exp(x - row_max);
          sum += x;
        }
        r.lse[(b * s.heads + h) * s.q_len + i] =
            sum == 0.0 ? -std::numeric_limits<double>::infinity() : row_max + std::log(sum);
        for (int64_t j = 0; j < s.kv_len; ++j) {
          double& x = p[i * s.kv_len + j];
          x = sum == 0.0 ? 0.0 : x / sum;
          for (int64_t d = 0; d < d_len; ++d) {
            r.out[qi(b, i, h) + d] += x * v[ki(b, j, hk) + d];
          }
        }
      }
      if (dout.empty()) {
        continue;
      }
      // dP = dO·Vᵀ, dS = P ∘ (dP - rowsum(P ∘ dP)), dQ = scale·dS·K, dK = scale·dSᵀ·Q, dV = Pᵀ·dO.
      for (int64_t i = 0; i < s.q_len; ++i) {
        double row = 0.0;
        for (int64_t j = 0; j < s.kv_len; ++j) {
          double x = 0.0;
          for (int64_t d = 0; d < d_len; ++d) {
            x += dout[qi(b, i, h) + d] * v[ki(b, j, hk) + d];
          }
          dp[i * s.kv_len + j] = x;
          row += x * p[i * s.kv_len + j];
        }
        for (int64_t j = 0; j < s.kv_len; ++j) {
          const double pij = p[i * s.kv_len + j];
          const double ds = pij * (dp[i * s.kv_len + j] - row);
          for (int64_t d = 0; d < d_len; ++d) {
            r.dq[qi(b, i, h) + d] += scale * ds * k[ki(b, j, hk) + d];
            r.dk[ki(b, j, hk) + d] += scale * ds * q[qi(b, i, h) + d];
            r.dv[ki(b, j, hk) + d] += pij * dout[qi(b, i, h) + d];
          }
        }
      }
    }
  }
  return r;
}

}  // namespace trainsim::kernels::testing

#endif  // TRAINSIM_TESTS_KERNELS_DENSE_ATTENTION_H_
