#include "sim/cost/attention_waves.h"

#include <algorithm>
#include <functional>
#include <queue>
#include <utility>
#include <vector>

namespace trainsim::cost {
namespace {

using config::AttentionPass;
using config::FusedAttentionKernel;

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// This project's kernels (kernels/attention/attention_config.cuh; blocks per SM from the compiler's
// register and shared-memory use, kernels/PERFORMANCE.md). A lone block's speed-up is read from the
// H200's samples (calibrate/profiles/h200-measured-20261130.yaml): per-step time of the 1,024-token
// calls (fewer blocks than SMs, each alone) against the 4,096-token ones (two per SM), forward 1.44 at
// head_dim 64 and 1.50 at 128; backward 1.13 and 1.17 before its memory passes and last wave, of
// which 1.1 remains once the model prices those.
constexpr double kMmaSyncForwardLoneSpeedup = 1.45;
constexpr double kMmaSyncBackwardLoneSpeedup = 1.1;

AttentionTiling mma_sync(AttentionPass pass, int64_t head_dim) {
  if (pass == AttentionPass::kForward) {
    // 128 query rows per block; 64 keys per step, 32 above head_dim 64 (registers).
    return {128, head_dim <= 64 ? 64 : 32, 2, kMmaSyncForwardLoneSpeedup, false, false};
  }
  // 64 keys per block; 64 query rows per step, 32 above head_dim 64. The grid has one block per K/V
  // head; dQ stays fp32.
  return {64, head_dim <= 64 ? 64 : 32, 2, kMmaSyncBackwardLoneSpeedup, true, false};
}

AttentionTiling wgmma(AttentionPass pass) {
  // sm_90a, one block per SM: forward 128 query rows x 128 keys, backward 128 keys x 64 query rows.
  if (pass == AttentionPass::kForward) return {128, 128, 1, 1, false, false};
  return {128, 64, 1, 1, true, false};
}

// FlashAttention-2 on an A100/H100-class GPU (csrc/flash_attn/src/flash_{fwd,bwd}_launch_template.h,
// run_mha_{fwd,bwd}_hdim*, the branch for >= 144 KiB of shared memory per block).
AttentionTiling flash_attention_2(AttentionPass pass, int64_t head_dim) {
  if (pass == AttentionPass::kForward) {
    // 4 warps, 128 query rows, 128 keys at head_dim 64, 64 at 128; 8 warps of 128 x 64 above. Two
    // 4-warp blocks fit an SM's shared memory (48 and 64 KiB each); a lone block's speed-up is from the
    // mma.sync forward above, a kernel of the same design, not measured for FlashAttention-2.
    if (head_dim <= 64) return {128, 128, 2, kMmaSyncForwardLoneSpeedup, false, false};
    if (head_dim <= 128) return {128, 64, 2, kMmaSyncForwardLoneSpeedup, false, false};
    return {128, 64, 1, 1, false, false};
  }
  // 8 warps, 128 keys per block and 128 query rows per step at head_dim 64, 64 at 128; 64 x 64 above;
  // one block per SM (the >= 144 KiB branch); a block per query head; dQ converted at the end.
  if (head_dim <= 64) return {128, 128, 1, 1, false, true};
  if (head_dim <= 128) return {128, 64, 1, 1, false, true};
  return {64, 64, 1, 1, false, true};
}

// FlashAttention-3 on Hopper (hopper/tile_size.h tile_size_fwd_sm90, hopper/flash_bwd_launch_template.h
// run_mha_bwd_hdim*, bf16/fp16): one block per SM, persistent; under a causal mask the forward's
// scheduler hands out the longest blocks first (hopper/tile_scheduler.hpp, DynamicPersistentTileScheduler,
// "longest-processing-time-first"). The backward has a block per query head and converts dQ at the end.
AttentionTiling flash_attention_3(AttentionPass pass, int64_t head_dim, bool causal) {
  if (pass == AttentionPass::kForward) {
    const auto forward = [&](int64_t rows, int64_t keys) {
      return AttentionTiling{rows, keys, 1, 1, false, false, causal};
    };
    if (head_dim <= 64) return forward(192, causal ? 128 : 192);
    if (head_dim <= 96) return forward(192, 144);
    if (head_dim <= 128) return forward(128, causal ? 128 : 176);
    if (head_dim <= 192) return forward(128, 128);
    return forward(128, 80);
  }
  const auto backward = [](int64_t keys, int64_t rows) {
    return AttentionTiling{keys, rows, 1, 1, false, true, false};
  };
  if (head_dim <= 64) return backward(128, 128);
  if (head_dim <= 96) return backward(128, 64);
  if (head_dim <= 128) return backward(128, causal ? 64 : 80);
  if (head_dim <= 192) return backward(96, 64);
  return backward(80, 64);
}

// Steps of block `index` (row blocks of one head, in grid order) under the call's mask.
int64_t block_steps(const AttentionCall& c, const AttentionTiling& t, int64_t index) {
  const int64_t offset = c.kv_len - c.q_len;  // query i sees keys <= i + offset under the causal mask
  if (c.pass == AttentionPass::kForward) {
    if (!c.causal) return ceil_div(c.kv_len, t.step_rows);
    const int64_t last_row = std::min((index + 1) * t.block_rows, c.q_len) - 1;
    const int64_t keys = std::clamp(last_row + offset + 1, int64_t{0}, c.kv_len);
    return ceil_div(keys, t.step_rows);
  }
  const int64_t steps = ceil_div(c.q_len, t.step_rows);
  if (!c.causal) return steps;
  const int64_t first_row = std::max(index * t.block_rows - offset, int64_t{0});
  return first_row >= c.q_len ? 0 : steps - first_row / t.step_rows;
}

}  // namespace

AttentionTiling attention_tiling(FusedAttentionKernel kernel, AttentionPass pass, int64_t head_dim,
                                 bool causal) {
  switch (kernel) {
    case FusedAttentionKernel::kMmaSync:
      return mma_sync(pass, head_dim);
    case FusedAttentionKernel::kWgmma:
      return wgmma(pass);
    case FusedAttentionKernel::kFlashAttention2:
      return flash_attention_2(pass, head_dim);
    case FusedAttentionKernel::kFlashAttention3:
      return flash_attention_3(pass, head_dim, causal);
  }
  return {};
}

double attention_wave_steps(const AttentionCall& c, const AttentionTiling& t, int64_t sm_count) {
  const bool per_kv_head = c.pass == AttentionPass::kBackward && t.block_per_kv_head && c.kv_heads > 0;
  const int64_t heads = c.batch * (per_kv_head ? c.kv_heads : c.heads);
  const int64_t group = per_kv_head ? c.heads / c.kv_heads : 1;
  const int64_t row_blocks = ceil_div(c.pass == AttentionPass::kForward ? c.q_len : c.kv_len, t.block_rows);
  const int64_t blocks = row_blocks * heads;
  if (blocks == 0) return 0;
  std::vector<double> steps(static_cast<size_t>(row_blocks));
  for (int64_t i = 0; i < row_blocks; ++i) {
    steps[static_cast<size_t>(i)] = static_cast<double>(group * block_steps(c, t, i));
  }
  // Every head's blocks have the same steps, so the longest first over all heads is each step count
  // once per head, in decreasing order.
  const bool sorted = t.longest_first;
  if (sorted) std::sort(steps.begin(), steps.end(), std::greater<>());
  const int64_t slots = std::max<int64_t>(t.blocks_per_sm, 1);
  const auto speed = [&](size_t resident) {
    if (slots == 1) return 1.0;
    return 1 + (t.lone_speedup - 1) * static_cast<double>(slots - static_cast<int64_t>(resident)) /
                   static_cast<double>(slots - 1);
  };
  // Each SM's resident blocks (steps left), the time they were last brought up to date, and the
  // earliest time one of them ends; an SM's speed changes only when its own blocks change.
  struct Sm {
    std::vector<double> left;
    double updated = 0;
  };
  std::vector<Sm> sms(static_cast<size_t>(std::max<int64_t>(sm_count, 1)));
  int64_t next = 0;
  const auto launch = [&](Sm& sm) {
    sm.left.push_back(steps[static_cast<size_t>(sorted ? next / heads : next % row_blocks)]);
    ++next;
  };
  for (int64_t round = 0; round < slots; ++round) {
    for (Sm& sm : sms) {
      if (next < blocks) launch(sm);
    }
  }
  using Event = std::pair<double, size_t>;  // (time the SM's shortest block ends, SM)
  std::priority_queue<Event, std::vector<Event>, std::greater<>> events;
  const auto schedule = [&](size_t i) {
    const Sm& sm = sms[i];
    if (sm.left.empty()) return;
    const double shortest = *std::min_element(sm.left.begin(), sm.left.end());
    events.emplace(sm.updated + shortest / speed(sm.left.size()), i);
  };
  for (size_t i = 0; i < sms.size(); ++i) schedule(i);
  double end = 0;
  while (!events.empty()) {
    const auto [time, i] = events.top();
    events.pop();
    Sm& sm = sms[i];
    const double done = (time - sm.updated) * speed(sm.left.size());
    std::erase_if(sm.left, [&](double& left) {
      left -= done;
      return left <= 1e-9 * (1 + done);
    });
    sm.updated = time;
    end = std::max(end, time);
    while (static_cast<int64_t>(sm.left.size()) < slots && next < blocks) launch(sm);
    schedule(i);
  }
  return end;
}

double AttentionWaveCache::steps(const AttentionCall& c, const AttentionTiling& tiling, int64_t sm_count) {
  const std::array<int64_t, 8> key{c.pass == AttentionPass::kForward ? 0 : 1,
                                   c.causal ? 1 : 0,
                                   c.batch,
                                   c.heads,
                                   c.kv_heads,
                                   c.q_len,
                                   c.kv_len,
                                   c.head_dim};
  const std::lock_guard lock(mutex_);
  const auto [it, inserted] = steps_.try_emplace(key, 0.0);
  if (inserted) it->second = attention_wave_steps(c, tiling, sm_count);
  return it->second;
}

}  // namespace trainsim::cost
