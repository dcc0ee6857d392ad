// The online-softmax merge: splitting the keys and merging equals attending to all of them, and the
// logsigmoid form stays exact where DeepSpeed's log1p(exp(·)) form overflows.
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "kernels/attention/merge_math.h"
#include "kernels/reference/attention.h"
#include "kernels/reference/merge.h"
#include "tests/kernels/test_util.h"

namespace trainsim::kernels {
namespace {

using testing::random_tensor;
using testing::relative_error;

// Keys [0, split) and [split, kv_len) as two blocks, merged, against one block over all keys.
TEST(ReferenceMerge, TwoKeyBlocksMergeToTheWholeBlock) {
  const AttentionShape whole{2, 12, 20, 4, 2, 16};
  const int64_t split = 7;
  std::mt19937 rng(3);
  const auto q = random_tensor<double>(whole.q_elements(), rng);
  const auto k = random_tensor<double>(whole.kv_elements(), rng);
  const auto v = random_tensor<double>(whole.kv_elements(), rng);
  const AttentionOptions options{false, std::nullopt};
  std::vector<double> out(q.size()), lse(static_cast<size_t>(whole.lse_elements()));
  reference::attention_forward<double>(whole, options, {q, k, v}, out, lse);

  auto part = [&](int64_t first, int64_t last) {
    const int64_t width = whole.kv_heads * whole.head_dim;
    std::vector<double> kp, vp;
    for (int64_t b = 0; b < whole.batch; ++b) {
      const int64_t base = b * whole.kv_len * width;
      kp.insert(kp.end(), k.begin() + base + first * width, k.begin() + base + last * width);
      vp.insert(vp.end(), v.begin() + base + first * width, v.begin() + base + last * width);
    }
    AttentionShape s = whole;
    s.kv_len = last - first;
    std::vector<double> o(q.size()), l(static_cast<size_t>(whole.lse_elements()));
    reference::attention_forward<double>(s, options, {q, kp, vp}, o, l);
    return std::pair{o, l};
  };
  auto [out_acc, lse_acc] = part(0, split);
  const auto [block_out, block_lse] = part(split, whole.kv_len);
  reference::merge_attention<double>(rows_of(whole), false, out_acc, lse_acc, block_out, block_lse);
  EXPECT_LT(relative_error(out_acc, out), 1e-13);
  EXPECT_LT(relative_error(lse_acc, lse), 1e-13);
}

TEST(ReferenceMerge, FirstBlockIsCopied) {
  const AttentionRows rows{1, 3, 2, 4};
  std::vector<float> out(24, std::numeric_limits<float>::quiet_NaN());
  std::vector<float> lse(6, std::numeric_limits<float>::quiet_NaN());
  std::mt19937 rng(5);
  const auto block_out = random_tensor<float>(24, rng);
  const auto block_lse = random_tensor<float>(6, rng);
  reference::merge_attention<float>(rows, true, out, lse, block_out, block_lse);
  EXPECT_EQ(out, block_out);
  EXPECT_EQ(lse, block_lse);
}

// DeepSpeed's _update_out_and_lse, kept here only to show that it overflows.
float log1p_form_lse(float lse, float block_lse) { return lse + std::log1p(std::exp(block_lse - lse)); }

TEST(ReferenceMerge, ExactForVeryLargeLogitsWhereTheLog1pFormOverflows) {
  // Scores of order 1e2-1e3 (large q·k, e.g. a sharp attention head without qk-norm).
  const std::vector<std::pair<float, float>> pairs = {
      {0.0F, 200.0F}, {-500.0F, 300.0F}, {1000.0F, 1000.5F}, {300.0F, -800.0F}, {87.0F, 300.0F}};
  for (const auto& [lse, block_lse] : pairs) {
    SCOPED_TRACE(::testing::Message() << "lse " << lse << " block_lse " << block_lse);
    const double exact =
        std::max<double>(lse, block_lse) +
        std::log1p(std::exp(-std::abs(static_cast<double>(lse) - static_cast<double>(block_lse))));
    const MergeWeights<float> w = merge_weights<float>(lse, block_lse);
    EXPECT_NEAR(w.lse, exact, 1e-6 * std::abs(exact));
    const double exact_block_weight = 1.0 / (1.0 + std::exp(static_cast<double>(lse) - block_lse));
    EXPECT_NEAR(w.block_weight, exact_block_weight, 1e-7);
    EXPECT_NEAR(w.out_weight + w.block_weight, 1.0, 1e-7);
    if (block_lse - lse > 88.0F) {
      EXPECT_TRUE(std::isinf(log1p_form_lse(lse, block_lse)));
    }
  }

  // Whole tensors through the reference merge, in float.
  const AttentionRows rows{1, 2, 1, 4};
  std::vector<float> out = {1, 2, 3, 4, 5, 6, 7, 8};
  std::vector<float> lse = {0.0F, 900.0F};
  const std::vector<float> block_out = {-1, -2, -3, -4, -5, -6, -7, -8};
  const std::vector<float> block_lse = {200.0F, 100.0F};
  reference::merge_attention<float>(rows, false, out, lse, block_out, block_lse);
  EXPECT_FLOAT_EQ(lse[0], 200.0F);  // the block dominates row 0 ...
  EXPECT_FLOAT_EQ(lse[1], 900.0F);  // ... and the running result dominates row 1
  EXPECT_FLOAT_EQ(out[0], -1.0F);
  EXPECT_FLOAT_EQ(out[7], 8.0F);
  EXPECT_TRUE(std::isinf(log1p_form_lse(0.0F, 200.0F)));
}

TEST(ReferenceMerge, EmptySidesContributeNothing) {
  const float inf = std::numeric_limits<float>::infinity();
  const MergeWeights<float> no_block = merge_weights<float>(3.0F, -inf);
  EXPECT_EQ(no_block.out_weight, 1.0F);
  EXPECT_EQ(no_block.block_weight, 0.0F);
  EXPECT_EQ(no_block.lse, 3.0F);
  const MergeWeights<float> no_running = merge_weights<float>(-inf, 3.0F);
  EXPECT_EQ(no_running.out_weight, 0.0F);
  EXPECT_EQ(no_running.block_weight, 1.0F);
  EXPECT_EQ(no_running.lse, 3.0F);
  const MergeWeights<float> neither = merge_weights<float>(-inf, -inf);
  EXPECT_EQ(neither.lse, -inf);
  EXPECT_EQ(neither.block_weight, 0.0F);
}

}  // namespace
}  // namespace trainsim::kernels
