// Measuring a case: what each metric means and how it is read from a simulation, from the operation
// graphs or from the memory model.
#ifndef TRAINSIM_SIM_VALIDATE_METRICS_H_
#define TRAINSIM_SIM_VALIDATE_METRICS_H_

#include <cstdint>
#include <optional>
#include <stdexcept>

#include "sim/config/scenario.h"
#include "sim/engine/scenario_run.h"
#include "sim/report/run_report.h"
#include "sim/validate/case.h"
#include "sim/validate/measurement.h"

namespace trainsim::validate {

// Whether `metric` depends on how fast the software runs (a stack parameter can move it): not the
// communication volume or the longest sequence that fits.
bool timed(Metric metric);

// The role of case `c`, whose scenario is `scenario`: the declared one, else calibration for a timed
// metric whose plan fits in one node of its topology, else validation.
Role role_of(const Case& c, const config::Scenario& scenario);

// The scenario a case is measured on: as its files say; on the hardware profile beneath its stack
// profile (the hardware-only column of `trainsim validate`); or with other stack parameters (a fit's
// trial, `trainsim calibrate fit-stack`).
struct Variant {
  bool hardware_only = false;
  std::optional<config::StackParameters> stack;  // replaces the stack profile's parameters
};

// A validation case its own stack profile was fitted on: its prediction would be a fit.
class LeakageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Simulates case `c` (its `variant`) and returns its measurement (measurement.h; wall_s and cpu_s left
// 0): the metric's value, the case's role and where it ran, and, for metrics read from a simulated
// iteration, the iteration time, the run report's breakdown of the critical rank and the memory
// verdict. Runs SimGrid for simulated metrics, so call it once per process
// (run_isolated). Throws LeakageError for a validation case (as its files say) that its stack profile
// was fitted on, config::ConfigError, workload::PlanError and engine::DeadlockError.
//
// Metric definitions:
//   iteration_time_s, tflops_per_gpu, mfu, hfu  as in the run report (sim/report/run_report.h)
//   tokens_per_s_per_gpu  the run report's tokens/s over the GPUs: a throughput free of any FLOP
//                       convention (releases of one framework count causal attention differently)
//   hardware_tflops_per_gpu  hardware FLOPs (recomputation included) per GPU per second: the
//                       convention of Narayanan et al. 2021 Table 1
//   executed_flops_utilization  the FLOPs the kernels run (recomputation included, the masked tiles of
//                       causal attention not) over the simulated time and the dense peak, as the run
//                       report's "executed FLOPs of peak"
//   megatron_deepspeed_mfu, megatron_deepspeed_tflops_per_gpu  the FLOPs of Megatron-DeepSpeed's
//                       throughput_calculator (megatron_deepspeed_flops) over the simulated time
//   layer_forward_s, layer_backward_s  see layer_times()
//   max_sequence_tokens  see max_sequence_tokens()
//   comm_volume_ratio   per-rank communication volume (the seed paper's view, comm_log.h) of rank
//                       0's graph, scenario / baseline; nothing is simulated
Measurement measure(const Case& c, const Variant& variant = {});

// The value of `metric` that one run of `scenario` with the metrics `run` gives, as measure() computes
// it; NaN for the metrics a run alone does not give (layer times, the longest sequence that fits, a
// communication-volume ratio).
double run_metric(Metric metric, const config::Scenario& scenario, const report::RunMetrics& run);

// FLOPs of one iteration as Megatron-DeepSpeed's throughput_calculator (megatron/utils.py) counts
// them, the code behind the FPDT and Ulysses measurements: per sequence and layer, multiply-adds
// (1 + 2 // (heads / kv_heads) + 1) h^2 s for the projections (the integer division drops the K/V
// projections under GQA), 2 d H s^2 for attention (non-causal), m F h s for the MLP (m = 3 for
// SwiGLU, else 2), plus V h s for the logits; backward = 2 x forward; one more forward with full
// recomputation, one more attention with selective; 2 FLOPs per multiply-add; times the global
// batch.
double megatron_deepspeed_flops(const config::Scenario& scenario);

struct LayerTimes {
  double forward_s = 0;
  double backward_s = 0;
  int64_t layers = 0;  // layers measured
};

// One transformer layer's forward and backward time on the critical rank of `run`: for each layer
// of micro-batch 0, from the issue of its first op to the end of its last (compute, tensor/sequence
// -parallel communication and copies; data-parallel reduction excluded), the backward including the
// layer's recomputation; the median over the rank's layers. What Korthikanti et al. 2022 Table 4
// reports per layer.
LayerTimes layer_times(const engine::ScenarioRun& run);

// The longest sequence in `search` (from, 2 from, 4 from, ... to) whose plan fits: the scenario of
// `c` with model.seq_len set to each length in turn, until the first that does not fit; fitting as
// the run report judges it (peak HBM of every rank class within the GPU's capacity, host memory per
// node within the node's), from the operation graphs' memory timelines. 0 when even `from` does not
// fit. A length the plan cannot express (e.g. not a multiple of the FPDT chunk) ends the search.
int64_t max_sequence_tokens(const Case& c, const Variant& variant = {});

}  // namespace trainsim::validate

#endif  // TRAINSIM_SIM_VALIDATE_METRICS_H_
