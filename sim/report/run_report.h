// The result of `trainsim run`: one report, typed, whose JSON (docs/DESIGN.md "File formats") and
// table are rendered from the same struct, and whose CSV row (report/csv.h) is read from that JSON,
// so the three never disagree.
//
// Metrics follow the frameworks' definitions: MFU = model FLOPs per iteration / (iteration time x
// GPUs x dense peak of the training dtype), model FLOPs counting dense GEMMs and attention as
// non-causal with backward = 2 x forward (Narayanan/Korthikanti); HFU adds the recomputed forward
// work. tokens/s = global batch x sequence length / iteration time.
#ifndef TRAINSIM_SIM_REPORT_RUN_REPORT_H_
#define TRAINSIM_SIM_REPORT_RUN_REPORT_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/config/scenario.h"
#include "sim/engine/scenario_run.h"
#include "sim/report/accuracy_evidence.h"
#include "sim/report/breakdown.h"
#include "sim/report/campaign.h"
#include "sim/report/comm_log.h"
#include "sim/report/memory_verdict.h"
#include "sim/report/why_slow.h"

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

// The plan a run simulated, as a planner reads it first.
struct PlanSummary {
  int64_t tp = 1, pp = 1, dp = 1, sp = 1, vpp = 1, ep = 1;
  std::string schedule;                // the pipeline schedule's spelling in scenarios
  std::string sequence_parallel;       // likewise the sequence scheme's
  std::optional<std::string> cp_comm;  // how ring context parallelism exchanges K/V, when it does
  int64_t zero_stage = 0;
  std::string recompute;
  int64_t micro_batch = 0, global_batch = 0, micro_batches_per_replica = 0, seq_len = 0;
  int64_t tokens_per_iteration = 0;
};

// What the scenario's stragglers did.
struct StragglerSummary {
  // When it slows GPUs: the slowest (its pipeline stage, which a collapsed run gives that speed), the
  // mean speed, how many run below the profile. Speeds are fractions of the profile's kernel rates.
  struct Gpus {
    int64_t slowest_rank = 0;
    int64_t slowest_stage = 0;
    double slowest_speed = 1;
    double mean_speed = 1;
    int64_t below_profile = 0;
  };
  std::optional<Gpus> gpus;
  std::map<int64_t, double> slow_nic_bytes_per_s;  // by node: each of its NICs' bandwidth
};

// The closed-form totals beside the simulated iteration.
struct AnalyticTotals {
  int64_t parameters = 0;
  double model_flops = 0, hardware_flops = 0;  // per iteration (analytic/flops.h)
  double graph_model_flops = 0;                // the model FLOPs of the simulated graphs
  double bubble_fraction = 0;                  // of the pipeline schedule
};

struct RunReport {
  RunMetrics metrics;
  nlohmann::json provenance;  // engine/provenance.h's, with the inputs and options
  std::string scenario;
  PlanSummary plan;
  std::string dtype;              // whose peak mfu, hfu and executed FLOPs use
  std::string gradient_dtype;     // of the gradients in memory
  std::string attention_kernel;   // "fused" or "unfused"
  std::string attention_pricing;  // how fused attention calls were priced; empty for unfused
  int64_t critical_rank = 0;
  std::vector<StageBreakdown> stages;  // per pipeline stage when pp > 1, by stage
  std::vector<CommRecord> comm;        // the critical rank's communication log
  AnalyticTotals analytic;
  std::vector<std::string> warnings;
  size_t ranks_simulated = 0;
  uint64_t ops_executed = 0;
  size_t mirrors_found = 0, mirrors_played = 0;  // mirrored communications (collapsed runs)
  // Each iteration's time, when the run was asked for more than one.
  std::optional<std::vector<double>> iteration_times_s;
  std::optional<StragglerSummary> stragglers;
  WhySlow why;                                 // `trainsim run` adds search's advice as its changes
  std::optional<CampaignReport> campaign;      // when the scenario states one
  std::optional<PowerReport> power;            // when the scenario models power
  std::optional<cost::LinkLoadSummary> links;  // when the run recorded its links' load
  std::optional<AccuracyEvidence> accuracy;    // when the caller adds it (validate::accuracy_for)
};

// Builds the report: run_metrics(scenario, run), and every other section. Never throws for a
// finished run.
RunReport make_run_report(const config::Scenario& scenario, const engine::ScenarioRun& run,
                          const ReportContext& context);

// The report as JSON: to_json of its metrics, and schema_version, provenance, scenario, plan, dtype,
// attention_kernel, attention_pricing, critical_rank, stages, comm, analytic {parameters,
// model_flops_per_iteration, hardware_flops_per_iteration, graph_model_flops_per_iteration,
// bubble_fraction}, warnings, simulation {ranks_simulated, ops_executed, mirrored_communications
// {found, played} when any}, memory.gradient_dtype, why, and those of iterations {count, times_s},
// stragglers, power, campaign, links and accuracy it has.
nlohmann::json to_json(const RunReport& report);

// A run's memory peaks as its report states them: the highest HBM peak of any simulated rank (and
// which, an index into run.result.ranks) and the pinned host memory of the busiest node, each
// symmetry class's peak standing for the ranks it mirrors.
struct MemoryPeaks {
  double hbm_bytes = 0;
  size_t hbm_rank_index = 0;
  double host_bytes_per_node = 0;
};
MemoryPeaks memory_peaks(const config::Scenario& scenario, const engine::ScenarioRun& run);

// The table rendering of a report, with the accuracy of its regime when it carries one (`trainsim
// run` adds validate::accuracy_for's evidence); its CSV row is report/csv.h's.
std::string render_table(const RunReport& report);

// infeasibility() of the memory verdict a report states (made by make_run_report, or the closed-form
// estimate's of sweep --analytic, which has no rank and no parts: it names "the fullest rank").
std::string infeasibility(const nlohmann::json& report);

}  // namespace trainsim::report

#endif  // TRAINSIM_SIM_REPORT_RUN_REPORT_H_
