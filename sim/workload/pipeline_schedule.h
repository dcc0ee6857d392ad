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
#ifndef TRAINSIM_SIM_WORKLOAD_PIPELINE_SCHEDULE_H_
#define TRAINSIM_SIM_WORKLOAD_PIPELINE_SCHEDULE_H_

#include <cstdint>
#include <vector>

#include "sim/config/types.h"

namespace trainsim::workload {

struct PipelineStep {
  bool forward = true;
  int64_t micro_batch = 0;
  int64_t chunk = 0;  // model chunk (0 unless interleaved)
  bool operator==(const PipelineStep&) const = default;
};

// The steps of `stage` (0-based) for `micro_batches` micro-batches. vpp must be 1 unless the schedule
// is interleaved, and then micro_batches must be a multiple of pp (derive_shapes checks both).
std::vector<PipelineStep> pipeline_schedule(config::Schedule schedule, int64_t pp, int64_t stage, int64_t vpp,
                                            int64_t micro_batches);

}  // namespace trainsim::workload

#endif  // TRAINSIM_SIM_WORKLOAD_PIPELINE_SCHEDULE_H_
