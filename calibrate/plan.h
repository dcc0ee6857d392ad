// What a calibration run measures: the sweeps of the issue (GEMM, attention blocks and FPDT
// overheads, collectives over every group size, host copies and memory bandwidth, interference),
// sized for the backend (a GPU, or the CPU references) and for --quick or a full run.
#ifndef TRAINSIM_CALIBRATE_PLAN_H_
#define TRAINSIM_CALIBRATE_PLAN_H_

#include <optional>
#include <string>
#include <vector>

#include "calibrate/backend.h"
#include "calibrate/cases.h"
#include "sim/workload/kernel_shapes.h"

namespace trainsim::calibrate {

struct PlanOptions {
  bool quick = false;
  int devices = 1;  // GPUs of the node to use (collective groups 1..devices)
  // When set, the calls a scenario's simulation prices (workload::kernel_shapes) join the default
  // grid: its GEMMs, attention blocks, collectives of groups within one node and host copies. What
  // this backend cannot measure is named in CalibrationPlan::notes.
  std::optional<workload::KernelShapes> scenario;
};

struct CalibrationPlan {
  TimingPolicy compute_policy;     // GEMM, attention, overheads, interference
  TimingPolicy collective_policy;  // collectives
  TimingPolicy copy_policy;        // host copies and device copies
  std::vector<GemmCase> gemms;
  std::vector<AttentionCase> attentions;
  std::vector<CollectiveCase> collectives;
  std::vector<CopyCase> copies;
  std::vector<double> device_copy_bytes;
  GemmCase interference_gemm;
  CollectiveCase interference_collective;
  GemmCase power_gemm;  // Backend::measure_power's workloads and hold
  double power_copy_bytes = 0;
  double power_hold_s = 0;
  std::vector<std::string> notes;  // cases left out and why (e.g. scenario shapes too large)

  // Timed items, for progress: every case plus the overheads, the interference pair and power.
  size_t item_count() const;
};

// The plan for `capabilities` (the backend's dtypes and size scale). Cases are in a deterministic
// order without duplicates. Throws std::invalid_argument when options.devices < 1.
CalibrationPlan make_plan(const PlanOptions& options, const Capabilities& capabilities);

}  // namespace trainsim::calibrate

#endif  // TRAINSIM_CALIBRATE_PLAN_H_
