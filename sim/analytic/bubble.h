// The ideal pipeline bubble (Narayanan et al. 2021, ground-truth.md A.7): idle time over ideal
// compute time, for uniform stages and no communication cost.
#ifndef TRAINSIM_SIM_ANALYTIC_BUBBLE_H_
#define TRAINSIM_SIM_ANALYTIC_BUBBLE_H_

#include <cstdint>

#include "sim/config/types.h"

namespace trainsim::analytic {

// Shares of one micro-batch's kernel time on a stage: the forward (F) and the weight gradients (W);
// the input gradients (B) take the rest. Equal thirds are the zero-bubble paper's assumption.
struct PassShares {
  double forward = 1.0 / 3;
  double weight_grad = 1.0 / 3;
};

// GPipe and 1F1B: (p - 1)/m; interleaved with v model chunks per stage: (p - 1)/(v*m).
// Zero bubble (ZB-H1, Qi et al. 2024 Sec. 3.1): (p - 1)(F + B - W) / (m(F + B + W)) = (p - 1)(1 - 2w)/m
// for m >= p, w being W's share: (p - 1)/(3m) with F = B = W. With fewer micro-batches fewer W
// passes fill the bubble: one micro-batch saves only the (p - 1) W passes that leave the critical
// path, each further one (up to p - 1) one W more, so (p - 1)(1 - w(1 + min(m - 1, p - 1)/(p - 1)))/m
// (our interpolation, within 2 % of the simulated bubble for p = 8). With v chunks, divided by v as
// for interleaving (also ours, not the paper's).
// ZB-V (Sec. 6): zero when F = B = W; otherwise (p - 1)(max(F, B) - W)/(m(F + B + W)), F, B and W
// over both chunks (fitted to simulated timelines: within 1 % for p = 4 and 8, B > F, m >= 2p - 1).
// Its pattern needs 2p - 1 micro-batches; with one, the critical path runs every forward and input
// gradient down and up the V, a bubble of (p - 1)(F + B) - W/2, and in between we interpolate
// linearly in m (ours; within 8 % of the simulated bubble for p = 8).
// DualPipeV: DualPipe's (PP/2 - 1)(F&B + B - 3W) per chunk (DeepSeek-V3 Table 2, B the whole backward)
// on 2p half-stages with F&B = F + B (the pair's kernels take turns): (p - 1)(F + 2B - W)/(2m(F + B +
// W)) over both chunks, B the input gradients; the simulated bubble is 2-9 % smaller (pp 16 to 4).
// 0 for p == 1.
double pipeline_bubble_fraction(config::Schedule schedule, int64_t pp, int64_t micro_batches, int64_t vpp,
                                PassShares shares = {});

}  // namespace trainsim::analytic

#endif  // TRAINSIM_SIM_ANALYTIC_BUBBLE_H_
