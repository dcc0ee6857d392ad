// The order in which one pipeline stage runs its forward and backward passes in an iteration, as
// Megatron-LM's schedules.py issues them.
//   GPipe (Huang et al. 2019; Narayanan et al. 2021 Fig. 3): every forward, then every backward, both
//     in micro-batch order.
//   1F1B (PipeDream-Flush; forward_backward_pipelining_without_interleaving): warm-up of
//     min(pp - stage - 1, m) forwards, then alternating one forward and one backward, then the
//     remaining backwards.
//   Interleaved 1F1B (Narayanan et al. 2021 Sec. 2.2; forward_backward_pipelining_with_interleaving):
//     m*vpp virtual micro-batches; the k-th forward runs model chunk (k mod pp*vpp) / pp on
//     micro-batch (k / (pp*vpp))*pp + k mod pp, backwards visit the chunks in reverse; warm-up is
//     (pp - stage - 1)*2 + (vpp - 1)*pp forwards (every forward when m == pp), capped at m*vpp.
//   Zero bubble (Qi et al., ICLR 2024, ZB-H1; with vpp > 1 its interleaved form, PyTorch's
//     ScheduleInterleavedZeroBubble): the backward splits into B (input gradients, on the critical
//     path) and W (weight gradients, which nothing downstream waits for). Warm-up is
//     (pp - stage - 1) + (vpp - 1)*pp forwards (B alone is about one forward long, so half the
//     interleaved warm-up), then one forward and one B alternate as in 1F1B; stage s holds back its
//     first s W passes (the last stage, idle longest at the end of 1F1B, the most), after that each B
//     is followed by the oldest held W, and the held W passes run last, filling the cool-down bubble.
//     A micro-batch keeps its activations until its W, so every stage holds at most pp micro-batches
//     (vpp = 1): the peak memory of 1F1B's first stage, now on every stage.
//   ZB-V (Qi et al. 2024 Sec. 6; PyTorch's ScheduleZBVZeroBubble): two chunks per stage placed in a V
//     (layout.h): stage s warms up with 2(pp - s) - 1 forwards of chunk 0, then s pairs of forwards
//     (chunk 1, chunk 0), then pp - s rounds of chunk 1's forward, B and W; in the steady state
//     chunk 0's forward, B, W and chunk 1's forward, B, W alternate; the cool-down runs the Bs first
//     and the held Ws last. The pattern needs 2pp - 1 micro-batches; with fewer, the steps of the
//     missing ones are dropped. Zero bubble when F = B = W, at 1F1B's peak activation memory.
//   DualPipeV (DeepSeek's DualPipe cut in half, deepseek-ai/DualPipe dualpipev.py; DeepSeek-V3
//     technical report Sec. 3.2.1 for DualPipe): ZB-V's V, m >= 2pp micro-batches. Stage s runs
//     2(pp - s - 1) forwards of chunk 0; s + 1 pairs (chunk 0, chunk 1) of forwards; pp - s - 1 rounds
//     of chunk 1's B, a W and chunk 1's forward; then the main step, m - 2pp + s + 1 times: chunk 0's
//     forward overlapped with chunk 1's whole backward, then chunk 1's forward overlapped with chunk 0's
//     (the last stage runs its first pair one after the other); pp - s - 1 times chunk 1's backward
//     and the pair (chunk 1's forward, chunk 0's backward); s + 1 rounds of both chunks' backwards,
//     whole in the first half and B only from the middle on; pp - s - 1 rounds of a W and chunk 0's
//     B; s + 1 W passes. W passes run in the order their Bs ran. An overlapped pair runs its two
//     passes at once on two lanes of the GPU (graph.h, Stream::kCompute2): the kernels take turns and
//     each pass's communication runs under the other's kernels.
//   Forward-backward pairs (`paired`; Megatron-Core's combined 1F1B, overlap_moe_expert_parallel_comm,
//     megatron/core/pipeline_parallel/combined_1f1b.py): 1F1B of one stage or interleaved 1F1B with one
//     more warm-up forward (schedules.py: num_warmup_microbatches += 1), so that each steady-state
//     forward and the backward after it belong to different micro-batches and run as an overlapped
//     pair on the GPU's two lanes, as DualPipeV's do: one pass's expert all-to-alls run under the
//     other's kernels. The warm-up forwards and the cool-down backwards run alone.
#ifndef TRAINSIM_SIM_WORKLOAD_PIPELINE_SCHEDULE_H_
#define TRAINSIM_SIM_WORKLOAD_PIPELINE_SCHEDULE_H_

#include <cstdint>
#include <vector>

#include "sim/config/types.h"

namespace trainsim::workload {

// What a step computes: the forward, the whole backward, or one half of a split backward.
enum class Pass : uint8_t { kForward, kBackward, kInputGrad, kWeightGrad };

struct PipelineStep {
  Pass pass = Pass::kForward;
  int64_t micro_batch = 0;
  int64_t chunk = 0;        // model chunk (0 unless vpp > 1)
  bool overlapped = false;  // a backward that runs at once with the forward before it (DualPipeV, pairs)
  bool operator==(const PipelineStep&) const = default;
};

// The steps of `stage` (0-based) for `micro_batches` micro-batches. vpp must be 1 unless the schedule
// is interleaved or zero bubble, and with vpp > 1 micro_batches must be a multiple of pp
// (derive_shapes checks both). DualPipeV with fewer than 2pp micro-batches (which the scenario
// decoder refuses, but the closed-form estimate's reduced graphs use) drops the missing ones' steps
// as ZB-V does; a backward whose forward partner was dropped runs alone. `paired` (1F1B and
// interleaved only) runs the steady state as forward-backward pairs.
std::vector<PipelineStep> pipeline_schedule(config::Schedule schedule, int64_t pp, int64_t stage, int64_t vpp,
                                            int64_t micro_batches, bool paired);

// Two micro-batch counts from which a schedule repeats itself: with `more` micro-batches it reaches
// its steady state (pp in flight for 1F1B, the full interleaved warm-up, 2pp for ZB-H1 whose stages
// hold back up to pp - 1 weight-gradient passes, the 2pp - 1 micro-batches of ZB-V's pattern and
// DualPipeV's 2pp, each with one more round of the main step) and `fewer` is
// one step of the pattern less (pp micro-batches for the interleaved schedules, whose counts step by
// pp, one otherwise). Every sum over an iteration (its time,
// kernel time, traffic) is affine in the micro-batch count from `fewer` on, so the iterations of
// these two counts extrapolate exactly to any larger count. `more` also has the full-size memory
// peak, except under GPipe, whose peak grows with every micro-batch. fewer is at least 1. ZB-V is the
// exception: its V puts the embedding and the LM head both on stage 0, whose extra work the other
// stages' deferred weight-gradient passes absorb for a while, so the time per micro-batch keeps
// rising towards stage 0's own (GPT-3 175B, pp 8, ideal network: 0.1764 s per micro-batch from 16
// to 25 micro-batches, 0.1812 s from 32 to 40, stage 0 alone 0.1818 s); its counts only approximate.
// With forward-backward pairs (`paired`) both counts are one step later.
struct SteadyStateCounts {
  int64_t fewer = 0;
  int64_t more = 0;
};
SteadyStateCounts steady_state_counts(config::Schedule schedule, int64_t pp, int64_t vpp, bool paired);

}  // namespace trainsim::workload

#endif  // TRAINSIM_SIM_WORKLOAD_PIPELINE_SCHEDULE_H_
