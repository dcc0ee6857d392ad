// What the cluster draws while it trains, from the simulated timeline. Each GPU's board power follows
// what the GPU is doing at each instant (the hardware profile's `power`): a tensor-core kernel running
// (GEMMs, attention) draws `compute`, a memory-bound kernel `memory`, communication or host copies with
// no kernel `communication`, nothing `idle`. Each node adds what its other parts draw (the topology's
// node.other_power), and the facility multiplies the IT load by its PUE (scenario cluster.facility).
// A collapsed run counts each simulated rank for every rank of its symmetry class; their timelines
// are the same by symmetry, so the cluster's profile keeps its shape.
//
// Not modelled: clock and power changes inside a state (a memory-bound kernel's draw depends on its
// bandwidth, a GEMM's on its shape), NCCL's spinning kernels while they wait for peers (idle here),
// switches and storage, power-capping interactions between GPUs of a node.
#ifndef TRAINSIM_SIM_REPORT_POWER_H_
#define TRAINSIM_SIM_REPORT_POWER_H_

#include <array>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/config/scenario.h"
#include "sim/engine/scenario_run.h"

namespace trainsim::report {

// The state a GPU is in, in the order that wins when several hold at once (a kernel running beside
// a collective is computing).
enum class GpuState { kIdle, kCommunication, kMemory, kCompute };
inline constexpr int kGpuStateCount = 4;

// A span of constant board power of one GPU.
struct PowerSpan {
  double start_s = 0;
  double end_s = 0;
  GpuState state = GpuState::kIdle;
};

// The states of the GPU that ran `run` (ops of `graph`) over [start_s, end_s]: contiguous spans in
// time order covering the whole interval.
std::vector<PowerSpan> gpu_states(const workload::Graph& graph, const engine::RankRun& run, double start_s,
                                  double end_s);

// The board power of `state`.
double state_power_w(const config::GpuPower& power, GpuState state);

// Averages over this window give the report's peak, trough and ramp: short enough to show the
// phases of an iteration (pipeline warm-up, a data-parallel all-reduce at its end), long enough to
// be what a facility's power distribution sees rather than single kernels.
inline constexpr double kPowerWindowS = 0.1;

// The `power` part of a run report.
struct PowerReport {
  double window_s = 0;  // of the peak, trough and ramp
  int64_t gpus = 0;
  int64_t nodes = 0;
  double node_other_power_w = 0;  // 0 when the topology gives none
  double pue = 1;
  double gpu_limit_w = 0;
  double gpu_mean_w = 0;                                // per GPU, over the iteration
  std::array<double, kGpuStateCount> state_fraction{};  // of GPU-time, by GpuState
  double it_mean_w = 0;
  double it_peak_w = 0, it_trough_w = 0;  // the highest and lowest window average
  double it_ramp_w_per_s = 0;             // the largest change between consecutive windows, per second
  double it_idle_w = 0;                   // every GPU idle: what the cluster draws while training stops
  double it_nameplate_w = 0;              // every GPU at its limit, plus the nodes
  double facility_mean_w = 0;             // it_mean_w x PUE
  double energy_per_iteration_j = 0, energy_per_token_j = 0;  // IT energy
};

// The power of the run's last iteration; none when the hardware profile gives no power.
std::optional<PowerReport> power_report(const config::Scenario& scenario, const engine::ScenarioRun& run);

// Keys: the fields above by their names, gpu_state_fraction {compute, memory, communication, idle}
// for state_fraction.
nlohmann::json to_json(const PowerReport& power);

// The table section of a run's power.
std::string render_power(const PowerReport& power);

}  // namespace trainsim::report

#endif  // TRAINSIM_SIM_REPORT_POWER_H_
