#include "sim/report/run_report.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <string_view>
#include <tuple>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "sim/analytic/analysis.h"
#include "sim/analytic/campaign.h"
#include "sim/common/text_table.h"
#include "sim/config/units.h"
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

// What the scenario's stragglers did: the GPUs' speeds (when it slows GPUs: the slowest and its
// pipeline stage, which a collapsed run gives that speed, the mean, how many run below the profile)
// and the nodes with slow NICs, by node.
json stragglers(const config::Stragglers& stragglers, const engine::ScenarioRun& run) {
  json out = json::object();
  const std::vector<double>& speed = run.gpu_speed;
  if (!speed.empty()) {
    const auto slowest = std::min_element(speed.begin(), speed.end());
    const int64_t slowest_rank = slowest - speed.begin();
    double sum = 0;
    int64_t below = 0;
    for (const double v : speed) {
      sum += v;
      below += v < 1 ? 1 : 0;
    }
    out["slowest_rank"] = slowest_rank;
    out["slowest_stage"] = run.plan.coords(slowest_rank).pp();
    out["slowest_speed"] = *slowest;
    out["mean_speed"] = sum / static_cast<double>(speed.size());
    out["gpus_below_profile"] = below;
  }
  json nics = json::array();
  for (const auto& [node, bandwidth] : stragglers.nic_bandwidth_by_node()) {
    nics.push_back({{"node", node}, {"bandwidth_bytes_per_s", bandwidth}});
  }
  out["slow_nics"] = nics;
  return out;
}

// The stragglers section of the table: the GPUs' speeds and the slow NICs.
std::string render_stragglers(const json& report) {
  const json& st = report.at("stragglers");
  std::string out = "\n# stragglers\n";
  if (st.contains("slowest_speed")) {
    out += fmt::format("{:<26} {:>13.1f}%   of the profile's kernel rates (rank {}, pipeline stage {})\n",
                       "slowest GPU", 100 * st.at("slowest_speed").get<double>(),
                       st.at("slowest_rank").get<int64_t>(), st.at("slowest_stage").get<int64_t>());
    out += fmt::format("{:<26} {:>13.1f}%   ({} of {} GPUs below 100 %)\n", "mean GPU speed",
                       100 * st.at("mean_speed").get<double>(), st.at("gpus_below_profile").get<int64_t>(),
                       report.at("gpus").get<int64_t>());
  }
  for (const json& nic : st.at("slow_nics")) {
    out +=
        fmt::format("{:<26} {:>11.1f} Gb/s per NIC (node {})\n", "slow NICs",
                    8 * nic.at("bandwidth_bytes_per_s").get<double>() / 1e9, nic.at("node").get<int64_t>());
  }
  return out;
}

// The plan the run simulated, as a planner reads it first.
json plan_summary(const config::Scenario& s) {
  const config::Parallelism& p = s.parallelism;
  json out = {{"tp", p.tp},
              {"pp", p.pp},
              {"dp", p.dp},
              {"sp", p.sp},
              {"vpp", p.vpp},
              {"ep", p.ep},
              {"schedule", config::to_string(p.schedule)},
              {"sequence_parallel", config::to_string(p.sequence_parallel)},
              {"zero_stage", p.zero_stage},
              {"recompute", config::to_string(p.recompute)},
              {"micro_batch", s.training.micro_batch},
              {"global_batch", s.training.global_batch},
              {"micro_batches_per_replica", s.micro_batches()},
              {"seq_len", s.model.seq_len},
              {"tokens_per_iteration", s.training.global_batch * s.model.seq_len}};
  if (config::sequence_scheme(p.sequence_parallel).exchanges_kv)
    out["cp_comm"] = config::to_string(p.cp_comm);
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
json iterations_report(const engine::EngineResult& r) {
  json times = json::array();
  double previous = 0;
  for (const double end : r.iteration_end_s) {
    times.push_back(end - previous);
    previous = end;
  }
  return {{"count", times.size()}, {"times_s", times}};
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
  json power;  // power_report's, null when the scenario models no power
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
  if (!p.power.is_null()) {
    m.gpu_mean_w = p.power.at("gpu_mean_w").get<double>();
    m.energy_per_token_j = p.power.at("energy_per_token_j").get<double>();
  }
  if (p.campaign) m.campaign_wall_time_s = p.campaign->wall_time_s;
  return m;
}

}  // namespace

RunMetrics run_metrics(const config::Scenario& s, const engine::ScenarioRun& run) {
  return metrics_of(s, run, run_parts(s, run));
}

json make_run_report(const config::Scenario& s, const engine::ScenarioRun& run,
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
  json stage_rows = json::array();
  for (const StageBreakdown& stage : stages) stage_rows.push_back(to_json(stage));

  json warnings = json::array();
  for (const std::string& w : run.warnings.messages()) warnings.push_back(w);
  json provenance = engine::provenance(context.command_line);
  provenance["inputs"] = scenario_inputs(s);
  provenance["options"] = {
      {"network", context.network}, {"full", context.full}, {"iterations", context.iterations}};
  json comm = json::array();
  for (const CommRecord& c : comm_log(run.plan, critical_graph, critical_run)) comm.push_back(to_json(c));
  const RunMetrics m = metrics_of(s, run, parts);
  json report = to_json(m);
  report.update({
      {"schema_version", 1},
      {"provenance", provenance},
      {"scenario", s.name},
      {"plan", plan_summary(s)},
      {"dtype", config::to_string(s.training.dtype)},  // whose peak mfu, hfu and executed use
      {"attention_kernel", config::to_string(s.attention_kernel())},
      {"attention_pricing", fused_attention_pricing(s)},
      {"critical_rank", r.critical_rank},
      {"stages", stage_rows},
      {"comm", comm},
      {"analytic",
       {{"parameters", parts.summary.parameters},
        {"model_flops_per_iteration", flops.model},
        {"hardware_flops_per_iteration", flops.hardware},
        {"graph_model_flops_per_iteration", parts.summary.iteration.model},
        {"bubble_fraction", bubble_fraction}}},
      {"warnings", warnings},
      {"simulation", {{"ranks_simulated", run.ranks.size()}, {"ops_executed", r.ops_executed}}},
  });
  report["memory"]["gradient_dtype"] = config::to_string(s.gradient_dtype());
  report["why"] = why_slow(s, critical_graph, critical_run, iteration_start, r.total_time_s, parts.breakdown,
                           stages, bubble_fraction, m.memory.peak_hbm_bytes);
  if (context.iterations > 1) report["iterations"] = iterations_report(r);
  if (s.stragglers.any()) report["stragglers"] = stragglers(s.stragglers, run);
  if (!parts.power.is_null()) report["power"] = parts.power;
  if (parts.campaign) report["campaign"] = campaign_report(s, *parts.campaign, parts.power);
  if (run.links) report["links"] = link_load_report(*run.links);
  if (r.mirrors_found > 0) {
    report["simulation"]["mirrored_communications"] = {{"found", r.mirrors_found},
                                                       {"played", r.mirrors_played}};
  }
  return report;
}

std::string render_accuracy(const json& a) {
  const std::string gpu = a.at("gpu").get<std::string>();
  const json& rows = a.at("rows");
  if (rows.empty()) {
    return fmt::format("# accuracy: no published run on {} is in trainsim's validation\n", gpu);
  }
  std::string out =
      fmt::format("# accuracy: published runs on {} at {} GPUs{}, as trainsim validate reproduces them:\n",
                  gpu, a.value("nearest_gpus", a.at("gpus").get<std::string>()),
                  a.contains("nearest_gpus")
                      ? fmt::format(" (none at this run's {} GPUs)", a.at("gpus").get<std::string>())
                      : "");
  const std::string framework = a.at("framework").get<std::string>();
  for (const json& row : rows) {
    const std::string name = row.at("framework").get<std::string>();
    const int64_t cases = row.at("cases").get<int64_t>();
    out += fmt::format(
        "#   {:<19} {:>3} {} case{} ({}): median |error| {:.1f}% (max {:.1f}%), {} simulated faster{}\n",
        name, cases, row.at("role").get<std::string>(), cases == 1 ? "" : "s",
        fmt::join(row.at("suites").get<std::vector<std::string>>(), ", "),
        100 * row.at("median_abs_error").get<double>(), 100 * row.at("max_abs_error").get<double>(),
        row.at("simulated_faster").get<int64_t>(),
        framework != "generic" && name == framework ? "  <- this run's framework" : "");
  }
  return out;
}

std::string infeasibility(const json& report) {
  return infeasibility(memory_verdict_from_json(report.at("memory")));
}

namespace {

// "# plan: tp 8 x pp 8 (vpp 3, interleaved) x dp 1, megatron sequence parallelism, ZeRO 0, selective
// recomputation; micro-batch 1, 64 micro-batches per replica, global batch 64 of 2048 tokens: 131072
// tokens per iteration"
std::string render_plan(const json& p) {
  std::string degrees = fmt::format("tp {}", p.at("tp").get<int64_t>());
  if (p.at("sp").get<int64_t>() > 1) degrees += fmt::format(" x sp {}", p.at("sp").get<int64_t>());
  degrees += fmt::format(" x pp {}", p.at("pp").get<int64_t>());
  if (p.at("pp").get<int64_t>() > 1) {
    degrees += fmt::format(
        " ({}{})", p.at("vpp").get<int64_t>() > 1 ? fmt::format("vpp {}, ", p.at("vpp").get<int64_t>()) : "",
        p.at("schedule").get<std::string>());
  }
  degrees += fmt::format(" x dp {}", p.at("dp").get<int64_t>());
  if (p.at("ep").get<int64_t>() > 1) degrees += fmt::format(", ep {}", p.at("ep").get<int64_t>());
  const std::string sequence = p.at("sequence_parallel").get<std::string>();
  std::string scheme = sequence == "none" ? "no sequence parallelism" : sequence + " sequence parallelism";
  if (p.contains("cp_comm"))
    scheme = fmt::format("ring context parallelism ({})", p.at("cp_comm").get<std::string>());
  const std::string recompute = p.at("recompute").get<std::string>();
  const int64_t micro_batches = p.at("micro_batches_per_replica").get<int64_t>();
  return fmt::format(
      "# plan: {}, {}, ZeRO {}, {} recomputation; micro-batch {}, {} micro-batch{} per replica, global batch "
      "{} of {} tokens: {} tokens per iteration\n",
      degrees, scheme, p.at("zero_stage").get<int>(), recompute == "none" ? "no" : recompute,
      p.at("micro_batch").get<int64_t>(), micro_batches, micro_batches == 1 ? "" : "es",
      p.at("global_batch").get<int64_t>(), p.at("seq_len").get<int64_t>(),
      p.at("tokens_per_iteration").get<int64_t>());
}

// "3   (0.1731, 0.1729, 0.1729 s; ...)": each iteration's time, with their spread or why there is none.
std::string render_iterations(const json& iterations) {
  const std::vector<double> times = iterations.at("times_s").get<std::vector<double>>();
  if (times.size() < 2) return "";
  std::string listed;
  for (const double t : times) listed += fmt::format("{}{:.6f}", listed.empty() ? "" : ", ", t);
  const auto [lo, hi] = std::minmax_element(times.begin(), times.end());
  const auto [steady_lo, steady_hi] = std::minmax_element(times.begin() + 1, times.end());
  std::string why;
  if (*hi - *lo <= 1e-9 * *hi) {
    why = "all equal: the simulation draws no noise and stragglers are fixed per rank";
  } else if (*steady_hi - *steady_lo <= 1e-9 * *steady_hi) {
    why = fmt::format(
        "the first {:+.2f}% from the others, which nothing of a previous iteration overlaps differently; "
        "then equal: the simulation draws no noise and stragglers are fixed per rank",
        100 * (times.front() - *steady_lo) / *steady_lo);
  } else {
    why = fmt::format("spread {:.2f}% from the fastest to the slowest", 100 * (*hi - *lo) / *lo);
  }
  return fmt::format("{:<26} {:>14}   ({} s; the report is the last; {})\n", "iterations", times.size(),
                     listed, why);
}

}  // namespace

std::string render_table(const json& report) {
  const RunMetrics metrics = run_metrics(report);
  const json& m = report.at("memory");
  const double t = metrics.iteration_time_s;
  const int64_t gpus = metrics.gpus;
  std::string out = fmt::format("# trainsim {} ({} GPU{})\n", report.at("scenario").get<std::string>(), gpus,
                                gpus == 1 ? "" : "s");
  out += render_inputs(report.at("provenance").at("inputs"));
  out += render_plan(report.at("plan"));
  out += report.at("attention_kernel").get<std::string>() == "fused"
             ? fmt::format("# attention kernel: fused (flash-style, priced by {}; model.attention)\n",
                           report.at("attention_pricing").get<std::string>())
             : "# attention kernel: unfused (softmax(QK^T)V as batched GEMMs and memory passes that store "
               "the scores; model.attention)\n";
  out += fmt::format("{:<26} {:>14.6f} s\n", "iteration time", t);
  if (report.contains("iterations")) out += render_iterations(report.at("iterations"));
  out += fmt::format("{:<26} {:>14.1f}\n", "tokens/s", metrics.tokens_per_s);
  out += fmt::format("{:<26} {:>14.1f}\n", "TFLOP/s per GPU", metrics.tflops_per_gpu);
  const std::string dtype = report.at("dtype").get<std::string>();
  out += fmt::format("{:<26} {:>13.1f}%   (model FLOPs{}, attention counted dense)\n", "MFU",
                     100 * metrics.mfu, dtype == "fp8" ? " of the fp8 peak" : "");
  out += fmt::format("{:<26} {:>13.1f}%   (+ recomputation)\n", "HFU", 100 * metrics.hfu);
  out += fmt::format("{:<26} {:>13.1f}%   (FLOPs the kernels run: causal tiles skipped)\n",
                     "executed FLOPs of peak", 100 * metrics.executed_flops_utilization);
  out += render_what_if(report.at("provenance").at("inputs"));
  if (report.contains("accuracy")) out += render_accuracy(report.at("accuracy"));
  out += fmt::format("\n# breakdown of rank {} (critical)\n", report.at("critical_rank").get<int64_t>());
  for (const BreakdownPart& part : kBreakdownParts) {
    const std::string_view key = part.key;
    const double v = metrics.breakdown.*part.seconds;
    out += fmt::format("{:<26} {:>14.6f} s {:>6.1f}%\n", key.substr(0, key.size() - 2), v,
                       t > 0 ? 100 * v / t : 0);
    if (part.seconds == &Breakdown::compute_s) {
      const double outside = metrics.breakdown.outside_layers_s;
      out += fmt::format("{:<26} {:>14.6f} s {:>6.1f}%   (embedding, LM head and loss, optimizer step)\n",
                         "  of which outside layers", outside, t > 0 ? 100 * outside / t : 0);
    }
  }
  if (!report.at("stages").empty()) {
    out += fmt::format("\n# breakdown per pipeline stage (s, up to each stage's last op)\n");
    TextTable stages({{"stage", TextTable::Align::kRight, 6},
                      {"layers", TextTable::Align::kRight, 7},
                      {"rank", TextTable::Align::kRight, 7}});
    for (const char* column : {"busy until", "compute", "comm", "bubble", "offload", "idle"}) {
      stages.add_column({column, TextTable::Align::kRight, 11});
    }
    for (const json& st : report.at("stages")) {
      std::vector<std::string> row = {std::to_string(st.at("stage").get<int64_t>()),
                                      std::to_string(st.at("layers").get<int64_t>()),
                                      std::to_string(st.at("rank").get<int64_t>())};
      row.push_back(fmt::format("{:.4f}", st.at("busy_until_s").get<double>()));
      for (const BreakdownPart& part : kBreakdownParts) {
        row.push_back(fmt::format("{:.4f}", st.at(part.key).get<double>()));
      }
      stages.add_row(std::move(row));
    }
    out += stages.render();
  }
  if (report.contains("why")) out += render_why_slow(report.at("why"), t);
  out += fmt::format(
      "\n# memory\n{:<26} {:>11.2f} GiB of {:.2f} GiB (rank {}); {:.2f} GiB usable after the "
      "{:g}% headroom (training.memory_headroom)\n",
      "peak HBM", m.at("peak_hbm_bytes").get<double>() / config::kBytesPerGiB,
      m.at("hbm_capacity_bytes").get<double>() / config::kBytesPerGiB, m.at("peak_hbm_rank").get<int64_t>(),
      m.at("usable_hbm_bytes").get<double>() / config::kBytesPerGiB,
      100 * m.at("memory_headroom").get<double>());
  for (const auto& [name, bytes] : m.at("hbm_at_peak_bytes").items()) {
    out += fmt::format("  {:<24} {:>11.2f} GiB{}\n", name, bytes.get<double>() / config::kBytesPerGiB,
                       name == "gradients" ? fmt::format("   ({}, training.grad_dtype)",
                                                         m.at("gradient_dtype").get<std::string>())
                                           : "");
  }
  out += fmt::format("{:<26} {:>11.2f} GiB of {:.2f} GiB\n", "peak host memory per node",
                     m.at("peak_host_bytes_per_node").get<double>() / config::kBytesPerGiB,
                     m.at("host_capacity_bytes_per_node").get<double>() / config::kBytesPerGiB);
  const double peak = m.at("peak_hbm_bytes").get<double>();
  const bool in_headroom =
      peak > m.at("usable_hbm_bytes").get<double>() && peak <= m.at("hbm_capacity_bytes").get<double>();
  out += fmt::format(
      "{:<26} {:>14}{}\n", "fits", m.at("fits").get<bool>() ? "yes" : "NO",
      in_headroom ? "   (the peak is in the headroom: a real run would likely run out of memory)" : "");
  if (report.contains("stragglers")) out += render_stragglers(report);
  if (report.contains("power")) out += render_power(report.at("power"));
  if (report.contains("campaign")) out += render_campaign(report.at("campaign"));
  out += "\n" + render_comm_table(report);
  if (report.contains("links")) out += "\n" + render_links(report.at("links"));
  const json& warnings = report.at("warnings");
  if (!warnings.empty()) {
    out += "\n# warnings\n";
    for (const json& w : warnings) out += "- " + w.get<std::string>() + "\n";
  }
  return out;
}

std::string render_comm_table(const json& report) {
  std::string out = fmt::format("# communication of rank {} (nccl-tests form; time from launch)\n",
                                report.at("critical_rank").get<int64_t>());
  out += fmt::format("# {:>14} {:>10} {:>8} {:>6} {:>7} {:>12} {:>10} {:>10}\n", "kind", "group", "ranks",
                     "calls", "bytes", "time", "algbw", "busbw");
  out += fmt::format("# {:>14} {:>10} {:>8} {:>6} {:>7} {:>12} {:>10} {:>10}\n", "", "", "", "", "(B)",
                     "(us)", "(GB/s)", "(GB/s)");
  std::vector<std::string> groups;
  for (const CommRecord& c : comm_records(report.at("comm"))) {
    out += fmt::format("  {:>14} {:>10} {:>8} {:>6} {:>7.0f} {:>12.2f} {:>10.2f} {:>10.2f}\n", c.kind,
                       c.group, c.group_size, c.calls, c.bytes_per_call, 1e6 * c.mean_time_s,
                       c.algbw_bytes_per_s / 1e9, c.busbw_bytes_per_s / 1e9);
    if (std::find(groups.begin(), groups.end(), c.group) == groups.end()) groups.push_back(c.group);
  }
  for (const std::string& group : groups) {
    const std::string_view meaning = workload::describe_group(group);
    if (!meaning.empty()) out += fmt::format("# {}: {}\n", group, meaning);
  }
  return out;
}

}  // namespace trainsim::report
