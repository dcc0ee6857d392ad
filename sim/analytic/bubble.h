// The ideal pipeline bubble (Narayanan et al. 2021, ground-truth.md A.7): idle time over ideal
// compute time, for uniform stages and no communication cost.
#ifndef TRAINSIM_SIM_ANALYTIC_BUBBLE_H_
#define TRAINSIM_SIM_ANALYTIC_BUBBLE_H_

#include <cstdint>

#include "sim/config/types.h"

namespace trainsim::analytic {

// GPipe and 1F1B: (p - 1)/m; interleaved with v model chunks per stage: (p - 1)/(v*m). 0 for p == 1.
double pipeline_bubble_fraction(config::Schedule schedule, int64_t pp, int64_t micro_batches, int64_t vpp);

}  // namespace trainsim::analytic

#endif  // TRAINSIM_SIM_ANALYTIC_BUBBLE_H_
