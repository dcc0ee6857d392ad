// `trainsim compare`: a simulated training step beside one measured on real GPUs (a PyTorch
// profiler trace, measured/kineto_trace.h). Both are reduced to the same StepProfile by the same
// code (measured/activity.h): the step time, where it went (compute, exposed communication, exposed
// host copies, idle) and the GPU time of each kernel class, so every difference is the model's, not
// a difference of accounting. For each compute class the simulation misprices, the report gives the
// hardware what-ifs (--set cluster.hardware_set...) that would match it to first order.
#ifndef TRAINSIM_SIM_REPORT_COMPARE_H_
#define TRAINSIM_SIM_REPORT_COMPARE_H_

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/config/scenario.h"
#include "sim/cost/compute_model.h"
#include "sim/engine/scenario_run.h"
#include "sim/measured/activity.h"
#include "sim/measured/kineto_trace.h"

namespace trainsim::report {

// The activities of `graph`'s ops as `run` played them (its last iteration): kernels from when they
// got the GPU to their end, collectives and sends/receives from when their stream reached them (a
// NCCL kernel starts then and waits for its peers inside) to their end, host copies. Fused attention
// is `attention`; unfused attention is what a profiler shows of it, GEMMs then softmax passes (split
// in the proportion `compute` gives their times).
std::vector<measured::Activity> simulated_activities(const workload::Graph& graph, const engine::RankRun& run,
                                                     const cost::ComputeModel& compute);

// The simulated step of the rank of `run` that stands for `rank` (itself when simulated, else the
// simulated rank of its symmetry class: the same pipeline stage), its last iteration, profiled as a
// measured step is (measured/activity.h).
measured::StepProfile simulated_step(const config::Scenario& scenario, const engine::ScenarioRun& run,
                                     int64_t rank);

struct CompareContext {
  std::string trace_file;  // as given
  int64_t rank = 0;        // the plan's rank the trace was taken on
  std::string command_line;
  std::string network;
  int iterations = 1;
  size_t top_kernels = 10;  // the measured kernel names listed, longest first
};

// The comparison of `trace` (taken on rank context.rank) with the simulated run `run` of `scenario`
// (make_run_report's `run_report` of it supplies the provenance and the memory verdict). The
// simulated rank is context.rank when the run simulated it, else the simulated rank of its symmetry
// class (the same pipeline stage). Never throws for a finished run and a rank of its plan.
nlohmann::json make_compare_report(const config::Scenario& scenario, const engine::ScenarioRun& run,
                                   const nlohmann::json& run_report, const measured::MeasuredTrace& trace,
                                   const CompareContext& context);

// The table rendering of a report made by make_compare_report.
std::string render_compare_table(const nlohmann::json& report);

// Several ranks' comparisons (make_compare_report's, one per trace; not empty) as one report:
// {"scenario", "ranks": [a row per rank: measured and simulated step and breakdown], "longest": the
// full comparison of the rank whose measured step is longest, "comparisons": every one in full}.
nlohmann::json make_ranks_report(const std::vector<nlohmann::json>& comparisons);

// The table rendering of make_ranks_report's report: the rows, then the longest rank in full.
std::string render_ranks_table(const nlohmann::json& report);

}  // namespace trainsim::report

#endif  // TRAINSIM_SIM_REPORT_COMPARE_H_
