// The chunked FPDT reference (A4/A5 loops) equals dense causal softmax attention, forward and all
// three gradients, over several (chunks, heads, kv_heads, head_dim, batch) combinations.
#include <random>
#include <stdexcept>
#include <vector>

#include <gtest/gtest.h>

#include "kernels/reference/fpdt.h"
#include "tests/kernels/dense_attention.h"
#include "tests/kernels/test_util.h"

namespace trainsim::kernels {
namespace {

using testing::convert;
using testing::random_tensor;
using testing::relative_error;

void check_fpdt_against_dense(const FpdtShape& shape, uint32_t seed) {
  const AttentionShape whole = shape.whole();
  std::mt19937 rng(seed);
  const auto q = random_tensor<float>(whole.q_elements(), rng);
  const auto k = random_tensor<float>(whole.kv_elements(), rng);
  const auto v = random_tensor<float>(whole.kv_elements(), rng);
  const auto dout = random_tensor<float>(whole.q_elements(), rng);
  const double scale = 1.0 / std::sqrt(static_cast<double>(shape.head_dim));
  const testing::DenseResult dense = testing::dense_attention(
      whole, true, scale, convert<double>(q), convert<double>(k), convert<double>(v), convert<double>(dout));

  std::vector<float> out(q.size()), lse(static_cast<size_t>(whole.lse_elements()));
  reference::fpdt_forward<float>(shape, std::nullopt, {q, k, v}, out, lse);
  EXPECT_LT(relative_error(out, dense.out), 1e-5);
  EXPECT_LT(relative_error(lse, dense.lse), 1e-6);

  std::vector<float> dq(q.size()), dk(k.size()), dv(v.size());
  reference::fpdt_backward<float>(shape, std::nullopt, {q, k, v, out, lse, dout}, dq, dk, dv);
  EXPECT_LT(relative_error(dq, dense.dq), 1e-5);
  EXPECT_LT(relative_error(dk, dense.dk), 1e-5);
  EXPECT_LT(relative_error(dv, dense.dv), 1e-5);
}

TEST(ReferenceFpdt, EqualsDenseCausalAttention) {
  // batch, heads, kv_heads, head_dim, chunk lengths
  const std::vector<FpdtShape> shapes = {
      {1, 2, 2, 16, {24}},              // u = 1: a single causal block
      {1, 4, 4, 32, {16, 16, 16, 16}},  // u = 4, multi-head
      {2, 4, 1, 16, {8, 8, 8}},         // batch 2, GQA 4:1 (multi-query)
      {1, 8, 2, 64, {12, 12}},          // head_dim 64, GQA 4:1
      {1, 2, 1, 128, {10, 6}},          // head_dim 128
      {2, 6, 3, 16, {5, 17, 1, 9}},     // chunks of different lengths, including a one-token chunk
  };
  uint32_t seed = 100;
  for (const FpdtShape& shape : shapes) {
    SCOPED_TRACE(::testing::Message()
                 << "u " << shape.chunks() << " heads " << shape.heads << " kv_heads " << shape.kv_heads
                 << " head_dim " << shape.head_dim << " batch " << shape.batch);
    check_fpdt_against_dense(shape, seed++);
  }
}

TEST(ReferenceFpdt, RejectsInvalidShapes) {
  std::vector<float> x(64);
  EXPECT_THROW(reference::fpdt_forward<float>({1, 1, 1, 4, {}}, std::nullopt, {x, x, x}, x, x),
               std::invalid_argument);
  EXPECT_THROW(reference::fpdt_forward<float>({1, 1, 1, 4, {8, 0}}, std::nullopt, {x, x, x}, x, x),
               std::invalid_argument);
}

TEST(FpdtShape, ChunkRegions) {
  const FpdtShape shape{2, 3, 1, 4, {5, 7}};
  EXPECT_EQ(shape.total_tokens(), 12);
  EXPECT_EQ(shape.chunk_start(1), 5);
  const StridedRegion q1 = token_chunk_region(shape, 1, 12);
  EXPECT_EQ(q1.offset_elements, 60);
  EXPECT_EQ(q1.run_elements, 84);
  EXPECT_EQ(q1.rows, 2);
  EXPECT_EQ(q1.pitch_elements, 144);
  const StridedRegion lse1 = lse_chunk_region(shape, 1);
  EXPECT_EQ(lse1.offset_elements, 5);
  EXPECT_EQ(lse1.run_elements, 7);
  EXPECT_EQ(lse1.rows, 6);
  EXPECT_EQ(lse1.pitch_elements, 12);
  const AttentionShape block = shape.block(1, 0);
  EXPECT_EQ(block.q_len, 7);
  EXPECT_EQ(block.kv_len, 5);
}

}  // namespace
}  // namespace trainsim::kernels
