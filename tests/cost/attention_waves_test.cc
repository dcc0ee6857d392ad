#include "sim/cost/attention_waves.h"

#include <gtest/gtest.h>

namespace trainsim::cost {
namespace {

using config::AttentionPass;
using config::Dtype;

AttentionCall call(AttentionPass pass, bool causal, int64_t heads, int64_t kv_heads, int64_t q_len,
                   int64_t kv_len) {
  return {pass, causal, Dtype::kBf16, 1, heads, kv_heads, q_len, kv_len, 128};
}

// Two blocks per SM, 128 rows per block, 32 keys per step; a lone block runs 1.5 times as fast.
constexpr AttentionTiling kTiling{128, 32, 2, 1.5, false, false};

TEST(AttentionWaves, FullWavesTakeEveryBlockItsStepsOncePerWave) {
  // 4 SMs x 2 blocks = one wave of 8 blocks (one head of 1,024 query rows), 32 steps each.
  const AttentionCall one_wave = call(AttentionPass::kForward, false, 1, 1, 1024, 1024);
  EXPECT_DOUBLE_EQ(attention_wave_steps(one_wave, kTiling, 4), 32);
  // Three heads: three waves.
  EXPECT_DOUBLE_EQ(attention_wave_steps(call(AttentionPass::kForward, false, 3, 3, 1024, 1024), kTiling, 4),
                   96);
}

TEST(AttentionWaves, ABlockAloneOnItsSmRunsFaster) {
  // 8 blocks on 8 SMs: each alone, 32 steps at 1.5 times the shared speed.
  const AttentionCall c = call(AttentionPass::kForward, false, 1, 1, 1024, 1024);
  EXPECT_DOUBLE_EQ(attention_wave_steps(c, kTiling, 8), 32 / 1.5);
  // Without the speed-up the half-empty GPU is no faster than a full one.
  EXPECT_DOUBLE_EQ(attention_wave_steps(c, {128, 32, 2, 1, false, false}, 8), 32);
}

TEST(AttentionWaves, TheCausalMaskLeavesTheLongestBlockAsTheCriticalPath) {
  // One wave: the last query block sees every key (32 steps); it shares its SM with block 3 (16 steps),
  // then runs alone.
  const AttentionCall causal = call(AttentionPass::kForward, true, 1, 1, 1024, 1024);
  EXPECT_DOUBLE_EQ(attention_wave_steps(causal, kTiling, 4), 16 + 16 / 1.5);
  // Many waves: the short blocks fill in and the call takes about half the unmasked time, never less
  // than the work spread over every slot.
  const AttentionCall many = call(AttentionPass::kForward, true, 64, 64, 1024, 1024);
  const double unmasked =
      attention_wave_steps(call(AttentionPass::kForward, false, 64, 64, 1024, 1024), kTiling, 4);
  const double masked = attention_wave_steps(many, kTiling, 4);
  const double work = 64 * (4 + 8 + 12 + 16 + 20 + 24 + 28 + 32);  // steps of the 8 blocks of each head
  EXPECT_GE(masked, work / 8);
  EXPECT_LT(masked, 0.6 * unmasked);
  // Query rows above a shorter key range see nothing: those blocks take no steps.
  EXPECT_DOUBLE_EQ(attention_wave_steps(call(AttentionPass::kForward, true, 1, 1, 1024, 256), kTiling, 8),
                   8 / 1.5);
}

TEST(AttentionWaves, LongestFirstBalancesACausalCall) {
  // 8 causal blocks of 4, 8, ..., 32 steps on 4 SMs of one block each: handed out longest first they
  // end together at 144 / 4; in grid order the longest starts last.
  const AttentionCall causal = call(AttentionPass::kForward, true, 1, 1, 1024, 1024);
  EXPECT_DOUBLE_EQ(attention_wave_steps(causal, {128, 32, 1, 1, false, false, true}, 4), 36);
  EXPECT_DOUBLE_EQ(attention_wave_steps(causal, {128, 32, 1, 1, false, false, false}, 4), 48);
}

TEST(AttentionWaves, BackwardBlocksOwnKeysAndMayLoopOverAQueryHeadGroup) {
  // Backward: a block per 128 keys loops over the queries at or after its first key.
  const AttentionTiling backward{128, 32, 2, 1.5, false, false};
  EXPECT_DOUBLE_EQ(attention_wave_steps(call(AttentionPass::kBackward, true, 1, 1, 1024, 1024), backward, 8),
                   32 / 1.5);
  // One block per K/V head: 4 query heads per K/V head make 4 times the steps in a quarter of the blocks.
  AttentionTiling per_kv_head = backward;
  per_kv_head.block_per_kv_head = true;
  const AttentionCall gqa = call(AttentionPass::kBackward, false, 4, 1, 1024, 1024);
  EXPECT_DOUBLE_EQ(attention_wave_steps(gqa, per_kv_head, 8), 4 * 32 / 1.5);
  EXPECT_DOUBLE_EQ(attention_wave_steps(gqa, backward, 8), 4 * 32 / 2.0);
}

}  // namespace
}  // namespace trainsim::cost
