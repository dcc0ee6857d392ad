// A closed-form estimate of one training iteration's time, for screening many plans quickly (sweeps
// with --analytic, the search's pruning): op times from the cost model summed per pipeline stage,
// alpha-beta communication per tier, the schedule's formula bubble, no congestion and no event
// simulation (Calculon's approach). `trainsim sweep --check-analytic` reports how far it is from the
// simulation.
#ifndef TRAINSIM_SIM_ESTIMATE_ITERATION_TIME_H_
#define TRAINSIM_SIM_ESTIMATE_ITERATION_TIME_H_

#include "sim/common/warnings.h"
#include "sim/config/scenario.h"
#include "sim/report/breakdown.h"
#include "sim/report/run_report.h"

namespace trainsim::estimate {

// Seconds of one iteration on the slowest pipeline stage, split the way `trainsim run` splits it
// (iteration_s is the sum of the breakdown's five parts).
struct IterationTimeEstimate {
  double iteration_s = 0;
  // Of the slowest stage's rank: compute (forward, backward, recompute and optimizer kernels, of which
  // outside_layers_s outside the transformer layers), exposed communication, pipeline fill and drain,
  // host<->device copies not hidden (FPDT, CPU checkpointing), and waiting for nothing the breakdown
  // names, as `trainsim run` reports them (no per-collective split).
  report::Breakdown breakdown;
  double model_flops = 0;     // per iteration, all GPUs (the MFU numerator of `trainsim run`)
  double hardware_flops = 0;  // model FLOPs plus what recomputation repeats (the HFU numerator)
  // Every kernel's FLOPs, masks and padding included (0 unless EstimateDetail::kFull).
  double executed_flops = 0;
  double tokens_per_s = 0;
  double mfu = 0;                       // model FLOPs / (iteration_s x GPUs x dense peak)
  double peak_hbm_bytes = 0;            // the memory peak of the fullest rank
  double peak_host_bytes_per_node = 0;  // pinned host memory of the busiest node (offload, CPU checkpoints)
  bool fits = true;  // peak_hbm_bytes within the GPU's usable HBM and host memory within the node's
};

// What an estimate holds: everything, or only the iteration time, the FLOPs and the memory peaks (the
// breakdown and executed FLOPs 0), which is what search's screening ranks plans by, for a tenth less
// time.
enum class EstimateDetail { kFull, kTimeAndMemory };

// Estimates `scenario`'s iteration. For the first stage, the last, the one with the most layers and
// the one with the slowest GPU, one rank's operation graph is laid out on its streams without an
// event simulation: each op starts when its predecessors have ended and lasts its cost-model time
// (kernels as the engine prices them, at the stage's slowest GPU's speed, slowed while a collective runs;
// collectives and sends alpha-beta over the intra-node links or the GPU's share of the NICs, as `--network
// ideal`; copies over the host link). The graphs hold a few micro-batches, every sum being affine in their
// number, and the time is split by what the compute stream waited for, as the run report does. The slowest
// stage plus the schedule's formula bubble over its per-micro-batch time is the iteration; memory peaks are
// tracked the engine's way. Within 10 % of the contention-free simulation on the shipped scenarios
// (tests/analytic). Warnings (extrapolated kernel shapes, missing efficiencies) go to `warnings`. Throws
// workload::PlanError when the plan cannot be expressed. `detail` says whether to split the time.
IterationTimeEstimate estimate_iteration_time(const config::Scenario& scenario, WarningLog* warnings,
                                              EstimateDetail detail = EstimateDetail::kFull);

// A lower bound on estimate_iteration_time(scenario).iteration_s at a fraction of its cost: the kernels
// of a rank's compute streams run one at a time, so a stage's iteration lasts at least their total,
// which is affine in the micro-batch count and so given at m by two small graphs per stage (the
// schedule's fewest micro-batches and twice that). Throws as estimate_iteration_time does.
double iteration_lower_bound_s(const config::Scenario& scenario);

// The estimate as the metrics a run report states (report::RunMetrics), for `scenario`'s GPUs and
// dense peak.
report::RunMetrics run_metrics(const config::Scenario& scenario, const IterationTimeEstimate& estimate);

}  // namespace trainsim::estimate

#endif  // TRAINSIM_SIM_ESTIMATE_ITERATION_TIME_H_
