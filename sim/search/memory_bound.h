// The memory test the search applies before any time estimate: a lower bound on the HBM peak that
// simulating the plan would report, so a plan it rejects can never be one that fits.
#ifndef TRAINSIM_SIM_SEARCH_MEMORY_BOUND_H_
#define TRAINSIM_SIM_SEARCH_MEMORY_BOUND_H_

#include "sim/config/scenario.h"

namespace trainsim::search {

// the profile's runtime context (every rank's graph allocates it, sim/workload/runtime_memory.h) +
// max over pipeline stages of
//   ZeRO model state of one rank of the stage (weights, gradients, optimizer state: the closed form of
//     sim/analytic/memory.h, which is what the operation graphs allocate for the whole iteration)
//   + the activations the stage keeps for the backward when the most are in flight: every layer's
//     input and stash for the recompute mode (sim/workload/activations.h) times the most layers of
//     (micro-batch, model chunk) pairs gone forward and not yet backward at any point of the stage's
//     schedule (sim/workload/pipeline_schedule.h). The compute stream runs the steps in that order
//     and a pass frees its activations only in its backward, so all of them are allocated at once.
// The activation term is left out where the plan keeps activations in host memory (FPDT), and the
// layer input where CPU checkpointing moves it there; working buffers, communication buffers, NCCL's
// buffers, the embedding and the LM head are all left out, so the bound stays at or below the
// simulated peak.
// Throws workload::PlanError when the workload cannot express the plan.
double memory_lower_bound_bytes(const config::Scenario& scenario);

}  // namespace trainsim::search

#endif  // TRAINSIM_SIM_SEARCH_MEMORY_BOUND_H_
