// The memory test applied before any graph is built (the search screens plans with it, `run` refuses an
// obviously infeasible plan with it): a lower bound on the HBM peak that simulating the plan would
// report, so a plan it rejects can never be one that fits.
#ifndef TRAINSIM_SIM_ANALYTIC_MEMORY_BOUND_H_
#define TRAINSIM_SIM_ANALYTIC_MEMORY_BOUND_H_

#include <cstdint>
#include <string>

#include "sim/analytic/memory.h"
#include "sim/config/scenario.h"

namespace trainsim::analytic {

// The lower bound of one rank's HBM peak, by part, at the stage where it is the largest:
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
struct MemoryLowerBound {
  int64_t stage = 0;            // the pipeline stage whose bound is the largest
  ZeroModelState model_state;   // of one rank of that stage
  double activation_bytes = 0;  // what that stage keeps for the backward at once
  double runtime_bytes = 0;     // the CUDA context
  double total() const { return model_state.total() + activation_bytes + runtime_bytes; }
};
MemoryLowerBound memory_lower_bound(const config::Scenario& scenario);

// Why `scenario` cannot fit, from its bound alone: the bound by part against the usable HBM
// (Scenario::usable_hbm_bytes), and each single change among a higher ZeRO stage, full recomputation
// and micro-batch 1 whose bound would be within it (passing the bound does not make a plan fit; the
// simulation decides). Empty when the bound is within the usable HBM or the plan is invalid (the
// workload reports that).
std::string memory_bound_refusal(const config::Scenario& scenario);

}  // namespace trainsim::analytic

#endif  // TRAINSIM_SIM_ANALYTIC_MEMORY_BOUND_H_
