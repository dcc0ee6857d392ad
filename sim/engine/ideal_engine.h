// The engine on the ideal network without SimGrid: the same per-rank scheduling as engine.h's
// simulate (stream order, rendezvous of collectives and of sends with their receives, the mirror
// matching of a collapsed run, the GPU's two lanes, kernels slowed while a collective runs, the host
// issuing ops, memory, iterations and the budgets), played as a discrete-event loop in which every
// collective, message and copy lasts its alpha-beta price (cost/alpha_beta.h), whatever else runs.
// No actors and no SimGrid engine: it is many times faster, and it can run any number of times in
// one process. The tests hold it to the SimGrid engine's results on a transport of the same prices.
//
// Where SimGrid leaves the order of simultaneous events to its actor scheduling, the loop fixes it:
// kernels start after everything else that happens at their instant (so a collective that begins at
// the instant a kernel starts slows it, one that ends then does not: sim/README.md's rule), and
// kernels waiting for the GPU of two lanes take it in the order they asked for it. The SimGrid
// engine applies the same overlap rule (cost::CollectivesInFlight), so on the same prices the two
// agree op for op on every shipped scenario (tests/engine/ideal_engine_test.cc); where both lanes of
// two ask for the GPU at one instant (DualPipeV, combined 1F1B), SimGrid gives it in the order its
// actors happen to run, and the iterations agree within 0.02 %.
#ifndef TRAINSIM_SIM_ENGINE_IDEAL_ENGINE_H_
#define TRAINSIM_SIM_ENGINE_IDEAL_ENGINE_H_

#include <vector>

#include "sim/cost/alpha_beta.h"
#include "sim/engine/engine.h"

namespace trainsim::engine {

// simulate_jobs (engine.h) with every transfer priced on `network`'s tiers. Throws DeadlockError and
// BudgetExceededError as it does.
std::vector<EngineResult> simulate_jobs(const std::vector<Job>& jobs, const cost::IdealTiers& network,
                                        const JobsOptions& options);

// simulate (engine.h) on `network`'s tiers.
EngineResult simulate(const workload::ParallelPlan& plan, const std::vector<int64_t>& ranks,
                      const std::vector<const workload::Graph*>& graphs, const cost::IdealTiers& network,
                      const cost::ComputeModel& compute, const EngineOptions& options);

}  // namespace trainsim::engine

#endif  // TRAINSIM_SIM_ENGINE_IDEAL_ENGINE_H_
