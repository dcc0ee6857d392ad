// The result of `trainsim run`: one JSON object (docs/DESIGN.md "File formats") from which the human
// table and the CSV row are rendered, so the three never disagree.
//
// Metrics follow the frameworks' definitions: MFU = model FLOPs per iteration / (iteration time x
// GPUs x dense peak of the training dtype), model FLOPs counting dense GEMMs and attention as
// non-causal with backward = 2 x forward (Narayanan/Korthikanti); HFU adds the recomputed forward
// work. tokens/s = global batch x sequence length / iteration time.
#ifndef TRAINSIM_SIM_REPORT_RUN_REPORT_H_
#define TRAINSIM_SIM_REPORT_RUN_REPORT_H_

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/config/scenario.h"
#include "sim/engine/scenario_run.h"
#include "sim/report/breakdown.h"
#include "sim/report/memory_verdict.h"

namespace trainsim::report {

struct ReportContext {
  std::string command_line;  // as typed, for provenance
  std::string network;       // the network model's name
  bool full = false;
  int iterations = 1;
};

// The numbers a run is judged by, as its report states them (validate, sweep, search, cluster and the
// CLI read these, not the report's keys): the iteration of the critical rank, throughput, FLOP
// utilisations against the training dtype's dense peak, where the iteration went, and the memory
// verdict.
struct RunMetrics {
  int64_t gpus = 0;
  double iteration_time_s = 0;
  double tokens_per_s = 0;
  double tflops_per_gpu = 0;  // model FLOPs per GPU per second / 1e12
  double mfu = 0;
  double hfu = 0;
  double executed_flops_utilization = 0;
  Breakdown breakdown;  // of the critical rank (outside_layers_s included; no per-collective split)
  MemoryVerdict memory;
  // When the scenario models power (the report's "power"): the GPUs' mean draw and the IT energy per
  // token.
  std::optional<double> gpu_mean_w;
  std::optional<double> energy_per_token_j;
  // When the scenario states a training campaign (the report's "campaign"): its wall time, infinite
  // when it never completes.
  std::optional<double> campaign_wall_time_s;
};

// The metrics as the keys of a report (gpus, iteration_time_s, tokens_per_s, tflops_per_gpu, mfu, hfu,
// executed_flops_utilization, compute_outside_layers_s, breakdown, memory (memory_verdict.h), and
// those of power's gpu_mean_w and energy_per_token_j and campaign's wall_time_s that are set, a
// campaign that never completes having none): what make_run_report and sweep's closed-form results
// share.
nlohmann::json to_json(const RunMetrics& metrics);
// The metrics of a report holding to_json's keys (made by make_run_report, or a sweep's closed-form
// result). Throws nlohmann::json::exception when the report lacks one.
RunMetrics run_metrics(const nlohmann::json& report);
// The metrics of a finished run, as make_run_report states them, without building the report.
RunMetrics run_metrics(const config::Scenario& scenario, const engine::ScenarioRun& run);

// Builds the report: to_json of run_metrics(scenario, run), and every other section. Never throws for
// a finished run.
nlohmann::json make_run_report(const config::Scenario& scenario, const engine::ScenarioRun& run,
                               const ReportContext& context);

// A run's memory peaks as its report states them: the highest HBM peak of any simulated rank (and
// which, an index into run.result.ranks) and the pinned host memory of the busiest node, each
// symmetry class's peak standing for the ranks it mirrors.
struct MemoryPeaks {
  double hbm_bytes = 0;
  size_t hbm_rank_index = 0;
  double host_bytes_per_node = 0;
};
MemoryPeaks memory_peaks(const config::Scenario& scenario, const engine::ScenarioRun& run);

// The table rendering of a report made by make_run_report (its CSV row is report/csv.h's), with
// the accuracy of its regime when the report carries one under "accuracy" (`trainsim run` adds
// validate::accuracy_for's object).
std::string render_table(const nlohmann::json& report);
// How well trainsim's validation reproduced published runs on a scenario's GPU at its scale, one line
// per framework, from validate::accuracy_for's object (a report's "accuracy").
std::string render_accuracy(const nlohmann::json& accuracy);
// The communication log in nccl-tests form (size, count, time, algbw, busbw per kind and group).
std::string render_comm_table(const nlohmann::json& report);

// infeasibility() of the memory verdict a report states (made by make_run_report, or the closed-form
// estimate's of sweep --analytic, which has no rank and no parts: it names "the fullest rank").
std::string infeasibility(const nlohmann::json& report);

}  // namespace trainsim::report

#endif  // TRAINSIM_SIM_REPORT_RUN_REPORT_H_
