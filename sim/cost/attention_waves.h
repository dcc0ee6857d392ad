// How a fused attention kernel cuts one call into thread blocks and how those blocks fill the GPU:
// wave quantization, the causal mask's uneven blocks, and the speed a block gains when it has its SM
// to itself. A call with fewer blocks than the GPU holds, or whose longest block outlasts the rest,
// takes longer than its FLOPs at the kernel's full-occupancy rate; this is what makes short sequences
// and few heads per GPU slow.
#ifndef TRAINSIM_SIM_COST_ATTENTION_WAVES_H_
#define TRAINSIM_SIM_COST_ATTENTION_WAVES_H_

#include <array>
#include <cstdint>
#include <map>
#include <mutex>

#include "sim/config/types.h"
#include "sim/cost/compute_model.h"

namespace trainsim::cost {

// One pass of one kernel at one head_dim, as its launch code configures it.
struct AttentionTiling {
  int64_t block_rows = 0;     // rows a thread block owns: query rows (forward), key rows (backward)
  int64_t step_rows = 0;      // rows one step of its loop takes: keys (forward), query rows (backward)
  int64_t blocks_per_sm = 1;  // resident blocks per SM (registers and shared memory)
  // A block's speed alone on its SM over its speed beside blocks_per_sm - 1 others; with a blocks
  // resident, each runs at 1 + (lone_speedup - 1)(blocks_per_sm - a)/(blocks_per_sm - 1).
  double lone_speedup = 1;
  bool block_per_kv_head = false;  // a backward block loops over every query head of its K/V head
  bool converts_dq = false;        // the backward ends with a pass writing fp32 dQ in the input type
  bool longest_first = false;      // a scheduler hands out the blocks with the most steps first
};

// The tiling of `kernel`'s `pass` at `head_dim` under a causal mask or none, each number cited to the
// kernel's launch code or a measurement in attention_waves.cc.
AttentionTiling attention_tiling(config::FusedAttentionKernel kernel, config::AttentionPass pass,
                                 int64_t head_dim, bool causal);

// How long `call` keeps the GPU busy, in steps of one block at full occupancy (every SM running
// blocks_per_sm blocks): its blocks in grid order (row blocks, then heads, then batch; the longest
// first where the tiling says so), the first
// blocks_per_sm x sm_count placed breadth first (one per SM, then a second, ...), each later one on
// the SM where a block ended first; each SM shares its speed among its resident blocks. Under a causal
// mask (bottom-right aligned) a block takes only the steps that reach unmasked pairs.
double attention_wave_steps(const AttentionCall& call, const AttentionTiling& tiling, int64_t sm_count);

// attention_wave_steps of one kernel on one GPU, each distinct call simulated once (a layer's calls
// repeat by the thousand); safe to share between threads.
class AttentionWaveCache {
 public:
  double steps(const AttentionCall& call, const AttentionTiling& tiling, int64_t sm_count);

 private:
  std::mutex mutex_;
  std::map<std::array<int64_t, 8>, double>
      steps_;  // by pass, mask, batch, heads, K/V heads, lengths, head_dim
};

}  // namespace trainsim::cost

#endif  // TRAINSIM_SIM_COST_ATTENTION_WAVES_H_
