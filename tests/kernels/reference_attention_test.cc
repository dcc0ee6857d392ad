// The block reference against the independent dense attention, including GQA, the bottom-right
// causal alignment for q_len != kv_len, and the row-wise spot-check functions.
#include <cmath>
#include <limits>
#include <random>
#include <stdexcept>
#include <vector>

#include <gtest/gtest.h>

#include "kernels/reference/attention.h"
#include "tests/kernels/dense_attention.h"
#include "tests/kernels/test_util.h"

namespace trainsim::kernels {
namespace {

using testing::dense_attention;
using testing::random_tensor;
using testing::relative_error;

struct Case {
  AttentionShape shape;
  bool causal;
};

void check_against_dense(const Case& c, uint32_t seed) {
  std::mt19937 rng(seed);
  const AttentionShape& s = c.shape;
  const auto q = random_tensor<double>(s.q_elements(), rng);
  const auto k = random_tensor<double>(s.kv_elements(), rng);
  const auto v = random_tensor<double>(s.kv_elements(), rng);
  const auto dout = random_tensor<double>(s.q_elements(), rng);
  const AttentionOptions options{c.causal, 0.3};
  const testing::DenseResult dense = dense_attention(s, c.causal, 0.3, q, k, v, dout);

  std::vector<double> out(q.size()), lse(static_cast<size_t>(s.lse_elements()));
  reference::attention_forward<double>(s, options, {q, k, v}, out, lse);
  EXPECT_LT(relative_error(out, dense.out), 1e-12);
  EXPECT_LT(relative_error(lse, dense.lse), 1e-12);

  std::vector<double> dq(q.size()), dk(k.size()), dv(v.size());
  reference::attention_backward<double>(s, options, {q, k, v, out, lse, dout}, dq, dk, dv);
  EXPECT_LT(relative_error(dq, dense.dq), 1e-11);
  EXPECT_LT(relative_error(dk, dense.dk), 1e-11);
  EXPECT_LT(relative_error(dv, dense.dv), 1e-11);
}

TEST(ReferenceAttention, MatchesDenseAttention) {
  const std::vector<Case> cases = {
      {{1, 16, 16, 2, 2, 8}, false},  {{1, 16, 16, 2, 2, 8}, true},  {{2, 13, 29, 4, 2, 16}, true},
      {{2, 13, 29, 4, 1, 16}, false}, {{1, 24, 24, 6, 3, 64}, true}, {{1, 9, 40, 8, 8, 32}, true},
  };
  uint32_t seed = 1;
  for (const Case& c : cases) {
    SCOPED_TRACE(::testing::Message()
                 << "q_len " << c.shape.q_len << " kv_len " << c.shape.kv_len << " causal " << c.causal);
    check_against_dense(c, seed++);
  }
}

TEST(ReferenceAttention, RowsWithoutVisibleKeysAreEmpty) {
  // Bottom-right alignment with q_len > kv_len: the first q_len - kv_len rows see no key.
  const AttentionShape s{1, 10, 4, 2, 1, 8};
  std::mt19937 rng(7);
  const auto q = random_tensor<float>(s.q_elements(), rng);
  const auto k = random_tensor<float>(s.kv_elements(), rng);
  const auto v = random_tensor<float>(s.kv_elements(), rng);
  std::vector<float> out(q.size()), lse(static_cast<size_t>(s.lse_elements()));
  reference::attention_forward<float>(s, {true, std::nullopt}, {q, k, v}, out, lse);
  for (int64_t h = 0; h < s.heads; ++h) {
    for (int64_t i = 0; i < s.q_len; ++i) {
      const float row_lse = lse[h * s.q_len + i];
      if (i < s.q_len - s.kv_len) {
        EXPECT_EQ(row_lse, -std::numeric_limits<float>::infinity());
        for (int64_t d = 0; d < s.head_dim; ++d) {
          EXPECT_EQ(out[(i * s.heads + h) * s.head_dim + d], 0.0F);
        }
      } else {
        EXPECT_TRUE(std::isfinite(row_lse));
      }
    }
  }
  const auto dout = random_tensor<float>(s.q_elements(), rng);
  std::vector<float> dq(q.size()), dk(k.size()), dv(v.size());
  reference::attention_backward<float>(s, {true, std::nullopt}, {q, k, v, out, lse, dout}, dq, dk, dv);
  for (float x : dq) {
    EXPECT_TRUE(std::isfinite(x));
  }
}

TEST(ReferenceAttention, RowFunctionsMatchFullPasses) {
  const AttentionShape s{2, 11, 17, 4, 2, 16};
  const AttentionOptions options{true, std::nullopt};
  std::mt19937 rng(11);
  const auto q = random_tensor<float>(s.q_elements(), rng);
  const auto k = random_tensor<float>(s.kv_elements(), rng);
  const auto v = random_tensor<float>(s.kv_elements(), rng);
  const auto dout = random_tensor<float>(s.q_elements(), rng);
  std::vector<float> out(q.size()), lse(static_cast<size_t>(s.lse_elements()));
  reference::attention_forward<float>(s, options, {q, k, v}, out, lse);
  std::vector<float> dq(q.size()), dk(k.size()), dv(v.size());
  const reference::BackwardInputs<float> in{q, k, v, out, lse, dout};
  reference::attention_backward<float>(s, options, in, dq, dk, dv);

  const int64_t b = 1, h = 3, i = 5, hk = 1, j = 12;
  const reference::ForwardRow row = reference::attention_forward_row<float>(s, options, {q, k, v}, b, h, i);
  const std::vector<double> dq_row = reference::attention_backward_dq_row<float>(s, options, in, b, h, i);
  const reference::KvRowGradients kv_row =
      reference::attention_backward_kv_row<float>(s, options, in, b, hk, j);
  EXPECT_NEAR(row.lse, lse[(b * s.heads + h) * s.q_len + i], 1e-5);
  for (int64_t d = 0; d < s.head_dim; ++d) {
    const int64_t qo = ((b * s.q_len + i) * s.heads + h) * s.head_dim + d;
    const int64_t ko = ((b * s.kv_len + j) * s.kv_heads + hk) * s.head_dim + d;
    EXPECT_NEAR(row.out[d], out[qo], 1e-6);
    EXPECT_NEAR(dq_row[d], dq[qo], 1e-6);
    EXPECT_NEAR(kv_row.dk[d], dk[ko], 1e-6);
    EXPECT_NEAR(kv_row.dv[d], dv[ko], 1e-6);
  }
}

TEST(ReferenceAttention, RejectsInvalidShapesAndSizes) {
  const std::vector<float> x(64, 1.0F);
  std::vector<float> out(64), lse(8);
  // kv_heads does not divide heads.
  EXPECT_THROW(reference::attention_forward<float>({1, 4, 4, 3, 2, 4}, {}, {x, x, x}, out, lse),
               std::invalid_argument);
  // out too small.
  std::vector<float> small(10);
  EXPECT_THROW(reference::attention_forward<float>({1, 4, 4, 4, 4, 4}, {}, {x, x, x}, small, lse),
               std::invalid_argument);
}

TEST(AttentionShape, CountsVisiblePairsAndFlops) {
  const AttentionShape square{1, 4, 4, 1, 1, 8};
  EXPECT_EQ(visible_pairs(square, false), 16);
  EXPECT_EQ(visible_pairs(square, true), 10);
  const AttentionShape tall{1, 6, 4, 1, 1, 8};  // rows 0, 1 see nothing; then 1..4 keys
  EXPECT_EQ(visible_pairs(tall, true), 1 + 2 + 3 + 4);
  const AttentionShape wide{2, 2, 5, 3, 1, 8};  // rows see 4 and 5 keys
  EXPECT_EQ(visible_pairs(wide, true), 9);
  EXPECT_DOUBLE_EQ(attention_forward_flops(wide, true), 4.0 * 2 * 3 * 8 * 9);
  EXPECT_DOUBLE_EQ(attention_backward_flops(wide, true), 2.5 * attention_forward_flops(wide, true));
  EXPECT_DOUBLE_EQ(AttentionOptions{}.scale_for(64), 0.125);
}

}  // namespace
}  // namespace trainsim::kernels
