#include "sim/report/run_report.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "sim/analytic/analysis.h"
#include "sim/analytic/campaign.h"
#include "sim/cost/compute_model.h"
#include "sim/engine/provenance.h"
#include "sim/report/breakdown.h"
#include "sim/report/campaign.h"
#include "sim/report/comm_log.h"
#include "sim/report/inputs.h"
#include "sim/report/link_report.h"
#include "sim/report/power.h"
#include "sim/report/why_slow.h"
#include "sim/workload/builder.h"
#include "sim/workload/layout.h"
#include "sim/workload/memory.h"
#include "sim/workload/shapes.h"
#include "sim/workload/summary.h"

namespace trainsim::report {
namespace {

using nlohmann::json;

// What the scenario's stragglers did (run_report.h StragglerSummary).
StragglerSummary stragglers(const config::Stragglers& stragglers, const engine::ScenarioRun& run) {
  StragglerSummary out;
  const std::vector<double>& speed = run.gpu_speed;
  if (!speed.empty()) {
    const auto slowest = std::min_element(speed.begin(), speed.end());
    StragglerSummary::Gpus gpus;
    gpus.slowest_rank = slowest - speed.begin();
    gpus.slowest_stage = run.plan.coords(gpus.slowest_rank).pp();
    gpus.slowest_speed = *slowest;
    double sum = 0;
    for (const double v : speed) {
      sum += v;
      gpus.below_profile += v < 1 ? 1 : 0;
    }
    gpus.mean_speed = sum / static_cast<double>(speed.size());
    out.gpus = gpus;
  }
  out.slow_nic_bytes_per_s = stragglers.nic_bandwidth_by_node();
  return out;
}

json to_json(const StragglerSummary& st) {
  json out = json::object();
  if (st.gpus) {
    out["slowest_rank"] = st.gpus->slowest_rank;
    out["slowest_stage"] = st.gpus->slowest_stage;
    out["slowest_speed"] = st.gpus->slowest_speed;
    out["mean_speed"] = st.gpus->mean_speed;
    out["gpus_below_profile"] = st.gpus->below_profile;
  }
  json nics = json::array();
  for (const auto& [node, bandwidth] : st.slow_nic_bytes_per_s) {
    nics.push_back({{"node", node}, {"bandwidth_bytes_per_s", bandwidth}});
  }
  out["slow_nics"] = nics;
  return out;
}

PlanSummary plan_summary(const config::Scenario& s) {
  const config::Parallelism& p = s.parallelism;
  const bool exchanges_kv = config::sequence_scheme(p.sequence_parallel).exchanges_kv;
  return {.tp = p.tp,
          .pp = p.pp,
          .dp = p.dp,
          .sp = p.sp,
          .vpp = p.vpp,
          .ep = p.ep,
          .schedule = std::string(config::to_string(p.schedule)),
          .sequence_parallel = std::string(config::to_string(p.sequence_parallel)),
          .cp_comm = exchanges_kv ? std::optional<std::string>(config::to_string(p.cp_comm)) : std::nullopt,
          .zero_stage = p.zero_stage,
          .recompute = std::string(config::to_string(p.recompute)),
          .micro_batch = s.training.micro_batch,
          .global_batch = s.training.global_batch,
          .micro_batches_per_replica = s.micro_batches(),
          .seq_len = s.model.seq_len,
          .tokens_per_iteration = s.training.global_batch * s.model.seq_len};
}

json to_json(const PlanSummary& p) {
  json out = {{"tp", p.tp},
              {"pp", p.pp},
              {"dp", p.dp},
              {"sp", p.sp},
              {"vpp", p.vpp},
              {"ep", p.ep},
              {"schedule", p.schedule},
              {"sequence_parallel", p.sequence_parallel},
              {"zero_stage", p.zero_stage},
              {"recompute", p.recompute},
              {"micro_batch", p.micro_batch},
              {"global_batch", p.global_batch},
              {"micro_batches_per_replica", p.micro_batches_per_replica},
              {"seq_len", p.seq_len},
              {"tokens_per_iteration", p.tokens_per_iteration}};
  if (p.cp_comm) out["cp_comm"] = *p.cp_comm;
  return out;
}

// How the run priced its fused attention calls (cost::ComputeModel::attention_s decides); empty for
// unfused attention.
std::string fused_attention_pricing(const config::Scenario& s) {
  if (s.attention_kernel() != config::AttentionKernel::kFused) return "";
  const config::HardwareProfile& hw = s.cluster.hardware;
  const std::string rates =
      cost::ComputeModel::prices_attention_by_waves(hw)
          ? fmt::format("{} blocks in waves over the SMs, at the hardware profile's attention rates",
                        config::to_string(*hw.compute.attention_kernel))
          : "the hardware profile's attention rates, every call filling the GPU";
  if (hw.attention_samples.empty()) return rates;
  return "the hardware profile's measured attention samples of the call's pass, mask and head_dim, "
         "else " +
         rates;
}

// The per-iteration times of a run of several iterations.
std::vector<double> iteration_times(const engine::EngineResult& r) {
  std::vector<double> times;
  double previous = 0;
  for (const double end : r.iteration_end_s) {
    times.push_back(end - previous);
    previous = end;
  }
  return times;
}

}  // namespace

MemoryPeaks memory_peaks(const config::Scenario& scenario, const engine::ScenarioRun& run) {
  const engine::EngineResult& r = run.result;
  MemoryPeaks out;
  for (size_t i = 0; i < r.ranks.size(); ++i) {
    if (r.ranks[i].peak_hbm_bytes > r.ranks[out.hbm_rank_index].peak_hbm_bytes) out.hbm_rank_index = i;
  }
  if (!r.ranks.empty()) out.hbm_bytes = r.ranks[out.hbm_rank_index].peak_hbm_bytes;
  // Host memory summed over each node's GPUs, a class's peak for every rank it mirrors.
  std::vector<double> class_host_peaks(run.plan.symmetry_classes().size(), 0.0);
  for (const engine::RankRun& rr : r.ranks) {
    double& p = class_host_peaks[static_cast<size_t>(rr.symmetry_class)];
    p = std::max(p, rr.peak_host_bytes);
  }
  out.host_bytes_per_node =
      workload::peak_host_bytes_per_node(run.plan, class_host_peaks, scenario.cluster.topology.node.gpus);
  return out;
}

json to_json(const RunMetrics& m) {
  json out = {{"gpus", m.gpus},
              {"iteration_time_s", m.iteration_time_s},
              {"tokens_per_s", m.tokens_per_s},
              {"tflops_per_gpu", m.tflops_per_gpu},
              {"mfu", m.mfu},
              {"hfu", m.hfu},
              {"executed_flops_utilization", m.executed_flops_utilization},
              {"compute_outside_layers_s", m.breakdown.outside_layers_s},
              {"breakdown", to_json(m.breakdown)},
              {"memory", to_json(m.memory)}};
  if (m.gpu_mean_w) out["power"]["gpu_mean_w"] = *m.gpu_mean_w;
  if (m.energy_per_token_j) out["power"]["energy_per_token_j"] = *m.energy_per_token_j;
  if (m.campaign_wall_time_s) {
    out["campaign"] = json::object();
    if (std::isfinite(*m.campaign_wall_time_s)) out["campaign"]["wall_time_s"] = *m.campaign_wall_time_s;
  }
  return out;
}

RunMetrics run_metrics(const json& report) {
  RunMetrics m;
  m.gpus = report.at("gpus").get<int64_t>();
  m.iteration_time_s = report.at("iteration_time_s").get<double>();
  m.tokens_per_s = report.at("tokens_per_s").get<double>();
  m.tflops_per_gpu = report.at("tflops_per_gpu").get<double>();
  m.mfu = report.at("mfu").get<double>();
  m.hfu = report.at("hfu").get<double>();
  m.executed_flops_utilization = report.at("executed_flops_utilization").get<double>();
  m.breakdown = breakdown_from_json(report.at("breakdown"));
  m.breakdown.outside_layers_s = report.at("compute_outside_layers_s").get<double>();
  m.memory = memory_verdict_from_json(report.at("memory"));
  if (report.contains("power")) {
    const json& power = report.at("power");
    m.gpu_mean_w = power.at("gpu_mean_w").get<double>();
    m.energy_per_token_j = power.at("energy_per_token_j").get<double>();
  }
  if (report.contains("campaign")) {
    m.campaign_wall_time_s =
        report.at("campaign").value("wall_time_s", std::numeric_limits<double>::infinity());
  }
  return m;
}

namespace {

// What the metrics and the rest of the report are both computed from.
struct RunParts {
  workload::WorkloadSummary summary;
  size_t critical = 0;  // the critical rank's index into run.ranks
  double iteration_start_s = 0;
  Breakdown breakdown;  // of the critical rank, over the last iteration
  MemoryVerdict memory;
  std::optional<PowerReport> power;                    // when the scenario models power
  std::optional<analytic::CampaignEstimate> campaign;  // when the scenario states one
};

RunParts run_parts(const config::Scenario& s, const engine::ScenarioRun& run) {
  const engine::EngineResult& r = run.result;
  RunParts p;
  p.summary = workload::summarize(s, run.plan, run.graphs);
  for (size_t i = 0; i < run.ranks.size(); ++i) {
    if (run.ranks[i] == r.critical_rank) p.critical = i;
  }
  p.iteration_start_s = r.total_time_s - r.iteration_time_s;
  p.breakdown =
      attribute_time(run.graph(p.critical), r.ranks[p.critical], p.iteration_start_s, r.total_time_s);
  const MemoryPeaks peaks = memory_peaks(s, run);
  p.memory = memory_verdict(s, peaks.hbm_bytes, peaks.host_bytes_per_node);
  const engine::RankRun& fullest = r.ranks[peaks.hbm_rank_index];
  p.memory.peak_hbm_rank = fullest.rank;
  for (int c = 0; c < workload::kMemoryCategoryCount; ++c) {
    p.memory.hbm_at_peak_bytes[std::string(workload::to_string(static_cast<workload::MemoryCategory>(c)))] =
        fullest.hbm_at_peak_bytes[static_cast<size_t>(c)];
  }
  p.power = power_report(s, run);
  if (s.campaign.tokens > 0) {
    p.campaign = analytic::estimate_campaign(s, r.iteration_time_s, p.memory.peak_host_bytes_per_node);
  }
  return p;
}

RunMetrics metrics_of(const config::Scenario& s, const engine::ScenarioRun& run, const RunParts& p) {
  const int64_t gpus = run.plan.world_size();
  const double t = run.result.iteration_time_s;
  const double gpu_peak_s =
      t * static_cast<double>(gpus) * *s.cluster.hardware.peak_flops_per_s(s.training.dtype);
  RunMetrics m;
  m.gpus = gpus;
  m.iteration_time_s = t;
  m.tokens_per_s = static_cast<double>(s.training.global_batch * s.model.seq_len) / t;
  m.tflops_per_gpu = p.summary.iteration.model / (t * static_cast<double>(gpus)) / 1e12;
  m.mfu = p.summary.iteration.model / gpu_peak_s;
  m.hfu = p.summary.iteration.hardware / gpu_peak_s;
  m.executed_flops_utilization = p.summary.iteration.executed / gpu_peak_s;
  m.breakdown = p.breakdown;
  m.memory = p.memory;
  if (p.power) {
    m.gpu_mean_w = p.power->gpu_mean_w;
    m.energy_per_token_j = p.power->energy_per_token_j;
  }
  if (p.campaign) m.campaign_wall_time_s = p.campaign->wall_time_s;
  return m;
}

}  // namespace

RunMetrics run_metrics(const config::Scenario& s, const engine::ScenarioRun& run) {
  return metrics_of(s, run, run_parts(s, run));
}

RunReport make_run_report(const config::Scenario& s, const engine::ScenarioRun& run,
                          const ReportContext& context) {
  const engine::EngineResult& r = run.result;
  const RunParts parts = run_parts(s, run);
  const analytic::IterationFlops flops = analytic::iteration_flops(s);
  const double bubble_fraction = analytic::pipeline_bubble_fraction(s, flops);
  const double iteration_start = parts.iteration_start_s;
  const workload::Graph& critical_graph = run.graph(parts.critical);
  const engine::RankRun& critical_run = r.ranks[parts.critical];
  std::vector<StageBreakdown> stages;
  if (s.parallelism.pp > 1) {
    const workload::StageLayout layout = workload::partition_layers(workload::derive_shapes(s, run.plan));
    std::vector<bool> seen(static_cast<size_t>(s.parallelism.pp), false);
    for (size_t i = 0; i < run.ranks.size(); ++i) {
      const auto stage = static_cast<size_t>(run.plan.coords(run.ranks[i]).pp());
      if (seen[stage]) continue;
      seen[stage] = true;
      const engine::RankRun& rr = r.ranks[i];
      StageBreakdown row{static_cast<int64_t>(stage), 0, rr.rank, rr.finish_s - iteration_start,
                         attribute_time(run.graph(i), rr, iteration_start, rr.finish_s)};
      for (int64_t chunk = 0; chunk < layout.vpp; ++chunk) {
        row.layers +=
            layout.layer_count[static_cast<size_t>(layout.virtual_stage(static_cast<int64_t>(stage), chunk))];
      }
      stages.push_back(std::move(row));
    }
    std::sort(stages.begin(), stages.end(),
              [](const StageBreakdown& x, const StageBreakdown& y) { return x.stage < y.stage; });
  }
  RunReport out;
  out.metrics = metrics_of(s, run, parts);
  out.provenance = engine::provenance(context.command_line);
  out.provenance["inputs"] = scenario_inputs(s);
  out.provenance["options"] = {
      {"network", context.network}, {"full", context.full}, {"iterations", context.iterations}};
  out.scenario = s.name;
  out.plan = plan_summary(s);
  out.dtype = config::to_string(s.training.dtype);
  out.gradient_dtype = config::to_string(s.gradient_dtype());
  out.attention_kernel = config::to_string(s.attention_kernel());
  out.attention_pricing = fused_attention_pricing(s);
  out.critical_rank = r.critical_rank;
  out.comm = comm_log(run.plan, critical_graph, critical_run);
  out.analytic = {parts.summary.parameters, flops.model, flops.hardware, parts.summary.iteration.model,
                  bubble_fraction};
  out.warnings = run.warnings.messages();
  out.ranks_simulated = run.ranks.size();
  out.ops_executed = r.ops_executed;
  out.mirrors_found = r.mirrors_found;
  out.mirrors_played = r.mirrors_played;
  out.why = why_slow(s, critical_graph, critical_run, iteration_start, r.total_time_s, parts.breakdown,
                     stages, bubble_fraction, out.metrics.memory.peak_hbm_bytes);
  out.stages = std::move(stages);
  if (context.iterations > 1) out.iteration_times_s = iteration_times(r);
  if (s.stragglers.any()) out.stragglers = stragglers(s.stragglers, run);
  out.power = parts.power;
  if (parts.campaign) {
    out.campaign = campaign_report(s, *parts.campaign, parts.power ? &*parts.power : nullptr);
  }
  if (run.links) out.links = *run.links;
  return out;
}

json to_json(const RunReport& report) {
  json stages = json::array();
  for (const StageBreakdown& stage : report.stages) stages.push_back(to_json(stage));
  json comm = json::array();
  for (const CommRecord& c : report.comm) comm.push_back(to_json(c));
  const AnalyticTotals& a = report.analytic;
  json out = to_json(report.metrics);
  out.update({
      {"schema_version", 1},
      {"provenance", report.provenance},
      {"scenario", report.scenario},
      {"plan", to_json(report.plan)},
      {"dtype", report.dtype},
      {"attention_kernel", report.attention_kernel},
      {"attention_pricing", report.attention_pricing},
      {"critical_rank", report.critical_rank},
      {"stages", stages},
      {"comm", comm},
      {"analytic",
       {{"parameters", a.parameters},
        {"model_flops_per_iteration", a.model_flops},
        {"hardware_flops_per_iteration", a.hardware_flops},
        {"graph_model_flops_per_iteration", a.graph_model_flops},
        {"bubble_fraction", a.bubble_fraction}}},
      {"warnings", report.warnings},
      {"simulation", {{"ranks_simulated", report.ranks_simulated}, {"ops_executed", report.ops_executed}}},
      {"why", to_json(report.why)},
  });
  out["memory"]["gradient_dtype"] = report.gradient_dtype;
  if (report.iteration_times_s) {
    out["iterations"] = {{"count", report.iteration_times_s->size()}, {"times_s", *report.iteration_times_s}};
  }
  if (report.stragglers) out["stragglers"] = to_json(*report.stragglers);
  if (report.power) out["power"] = to_json(*report.power);
  if (report.campaign) out["campaign"] = to_json(*report.campaign);
  if (report.links) out["links"] = to_json(*report.links);
  if (report.accuracy) out["accuracy"] = to_json(*report.accuracy);
  if (report.mirrors_found > 0) {
    out["simulation"]["mirrored_communications"] = {{"found", report.mirrors_found},
                                                    {"played", report.mirrors_played}};
  }
  return out;
}

std::string infeasibility(const json& report) {
  return infeasibility(memory_verdict_from_json(report.at("memory")));
}

}  // namespace trainsim::report
