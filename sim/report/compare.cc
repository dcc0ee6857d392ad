#include "sim/report/compare.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "sim/common/text_table.h"
#include "sim/cost/op_cost.h"
#include "sim/report/run_report.h"
#include "sim/workload/comm_log.h"
#include "sim/workload/plan.h"

namespace trainsim::report {
namespace {

using measured::Activity;
using measured::ActivityClass;
using measured::StepProfile;
using nlohmann::json;
using workload::CollectiveKind;
using workload::Op;
using workload::OpKind;

std::optional<ActivityClass> class_of(const Op& op) {
  switch (op.kind) {
    case OpKind::kGemm:
      return ActivityClass::kGemm;
    case OpKind::kAttentionForward:
    case OpKind::kAttentionBackward:
      return ActivityClass::kAttention;
    case OpKind::kMemory:
      return ActivityClass::kMemory;
    case OpKind::kOptimizerStep:
      return ActivityClass::kOptimizer;
    case OpKind::kCollective:
      switch (op.collective.kind) {
        case CollectiveKind::kAllReduce:
          return ActivityClass::kAllReduce;
        case CollectiveKind::kAllGather:
          return ActivityClass::kAllGather;
        case CollectiveKind::kReduceScatter:
          return ActivityClass::kReduceScatter;
        case CollectiveKind::kAllToAll:
          return ActivityClass::kSendRecv;
        case CollectiveKind::kBarrier:
          return ActivityClass::kOtherCollective;
      }
      return std::nullopt;
    case OpKind::kSend:
    case OpKind::kRecv:
      return ActivityClass::kSendRecv;
    case OpKind::kCopy:
      return ActivityClass::kHostCopy;
    case OpKind::kHostSync:  // host synchronisations, stream waits, allocations: no GPU activity
    case OpKind::kStreamWait:
    case OpKind::kAlloc:
    case OpKind::kFree:
      return std::nullopt;
  }
  return std::nullopt;
}

// {"measured", "simulated", "error"}: error = (simulated - measured) / measured, null when nothing
// was measured.
json pair(double measured_value, double simulated_value) {
  return {{"measured", measured_value},
          {"simulated", simulated_value},
          {"error", measured_value > 0 ? json((simulated_value - measured_value) / measured_value) : json()}};
}

// The simulated run of the plan's `rank`, or of its symmetry class.
size_t simulated_index(const engine::ScenarioRun& run, int64_t rank) {
  const auto& ranks = run.result.ranks;
  for (size_t i = 0; i < ranks.size(); ++i) {
    if (ranks[i].rank == rank) return i;
  }
  const int32_t cls = run.plan.class_of(rank);
  for (size_t i = 0; i < ranks.size(); ++i) {
    if (ranks[i].symmetry_class == cls) return i;
  }
  return 0;  // every class has a simulated rank
}

std::string error_text(const json& e) {
  return e.is_null() ? std::string("-") : fmt::format("{:+.1f}%", 100 * e.get<double>());
}

// The --set arguments that scale `keys` of the profile's compute section by 1 / `ratio`, so that a
// kernel class the simulation prices from them takes `ratio` times as long (to first order: a
// roofline kernel's time is inversely proportional to its efficiency). Empty when a key is not given
// or would exceed 1.
std::vector<std::string> scaled_efficiencies(const std::vector<std::pair<std::string, double>>& keys,
                                             double ratio) {
  std::vector<std::string> out;
  for (const auto& [key, value] : keys) {
    if (value <= 0 || value / ratio > 1) return {};
    out.push_back(fmt::format("cluster.hardware_set.compute.{}={:.3g}", key, value / ratio));
  }
  return out;
}

// What-ifs over the hardware profile that would bring each compute class the simulation misprices by
// more than 5 % to its measured time. A class the profile's measured samples price has none (they
// are times, not rates): `notes` says so.
json what_ifs(const config::Scenario& scenario, const StepProfile& meas, const StepProfile& sim,
              json& notes) {
  const config::HardwareProfile& hw = scenario.cluster.hardware;
  const config::ComputeModel& c = hw.compute;
  const bool fp8 = scenario.training.dtype == config::Dtype::kFp8;
  json out = json::array();
  const auto add = [&](ActivityClass cls, const std::vector<std::pair<std::string, double>>& keys,
                       const char* samples) {
    const double m = meas.of(cls).time_s;
    const double s = sim.of(cls).time_s;
    if (m <= 0 || s <= 0 || std::abs(m / s - 1) <= 0.05) return;
    const std::string name(measured::to_string(cls));
    if (samples != nullptr) {
      notes.push_back(
          fmt::format("{} measured {:.3f}x the simulated time, which the profile's {} price: this GPU "
                      "is not the profile's (calibrate it: trainsim calibrate run)",
                      name, m / s, samples));
      return;
    }
    const std::vector<std::string> set = scaled_efficiencies(keys, m / s);
    if (!set.empty()) out.push_back({{"class", name}, {"measured_over_simulated", m / s}, {"set", set}});
  };
  add(ActivityClass::kGemm,
      {{fp8 ? "gemm_efficiency_fp8" : "gemm_efficiency", fp8 ? c.gemm_efficiency_fp8 : c.gemm_efficiency}},
      hw.gemm_samples.empty() ? nullptr : "gemm_samples");
  add(ActivityClass::kAttention,
      {{"attention_forward_efficiency", c.attention_forward_efficiency},
       {"attention_backward_efficiency", c.attention_backward_efficiency}},
      hw.attention_samples.empty() ? nullptr : "attention_samples");
  add(ActivityClass::kMemory, {{"memory_efficiency", c.memory_efficiency}}, nullptr);
  return out;
}

// The measured and simulated communication per (kind, group size), every pair either side has.
json communication(const measured::MeasuredTrace& trace, const workload::ParallelPlan& plan,
                   const workload::Graph& graph) {
  std::map<std::pair<std::string, int64_t>, std::pair<measured::CommTotal, measured::CommTotal>> both;
  for (const measured::CommTotal& m : trace.comms) both[{m.kind, m.group_size}].first = m;
  for (const workload::CommLogEntry& e : workload::comm_log(plan, graph)) {  // one entry per message size
    measured::CommTotal& s = both[{std::string(workload::to_string(e.kind)), e.group_size}].second;
    s.calls += static_cast<double>(e.calls);
    s.bytes += e.total_bytes;
  }
  json out = json::array();
  for (const auto& [key, pair_of] : both) {
    const auto& [m, s] = pair_of;
    json row = pair(m.bytes, s.bytes);
    row["kind"] = key.first;
    row["group_size"] = key.second;
    row["measured_calls"] = m.calls;
    row["simulated_calls"] = s.calls;
    out.push_back(row);
  }
  return out;
}

}  // namespace

std::vector<Activity> simulated_activities(const workload::Graph& graph, const engine::RankRun& run,
                                           const cost::ComputeModel& compute) {
  std::vector<Activity> out;
  for (workload::OpId id = 0; id < graph.size(); ++id) {
    const Op& op = graph.op(id);
    const std::optional<ActivityClass> cls = class_of(op);
    if (!cls) continue;
    if (*cls == ActivityClass::kAttention && !op.attention.fused) {
      // Its GEMMs first, then the softmax passes, in the proportion of their modelled times.
      const cost::UnfusedAttentionTimes t = cost::unfused_attention_times(op, compute);
      const double split =
          run.launch_s[id] + (run.end_s[id] - run.launch_s[id]) * t.gemm_s / (t.gemm_s + t.memory_s);
      out.push_back({ActivityClass::kGemm, run.launch_s[id], split});
      out.push_back({ActivityClass::kMemory, split, run.end_s[id]});
      continue;
    }
    const bool communication = measured::is_communication(*cls);
    out.push_back({*cls, communication ? run.start_s[id] : run.launch_s[id], run.end_s[id]});
  }
  return out;
}

StepProfile simulated_step(const config::Scenario& scenario, const engine::ScenarioRun& run, int64_t rank) {
  const size_t index = simulated_index(run, rank);
  const double end_s = run.result.total_time_s;
  WarningLog warnings;  // the run logged its own
  const cost::ComputeModel compute(scenario.cluster.hardware, &warnings);
  return measured::profile_step(simulated_activities(run.graph(index), run.result.ranks[index], compute),
                                end_s - run.result.iteration_time_s, end_s);
}

json make_compare_report(const config::Scenario& scenario, const engine::ScenarioRun& run,
                         const json& run_report, const measured::MeasuredTrace& trace,
                         const CompareContext& context) {
  const size_t index = simulated_index(run, context.rank);
  const engine::RankRun& rank_run = run.result.ranks[index];
  const StepProfile sim = simulated_step(scenario, run, context.rank);
  const StepProfile meas = measured::mean_profile(trace.steps);

  const auto [shortest, longest] =
      std::minmax_element(trace.steps.begin(), trace.steps.end(),
                          [](const StepProfile& a, const StepProfile& b) { return a.step_s < b.step_s; });
  json step_time = pair(meas.step_s, sim.step_s);
  step_time["measured_min"] = shortest->step_s;
  step_time["measured_max"] = longest->step_s;
  json classes = json::array();
  for (int c = 0; c < measured::kActivityClassCount; ++c) {
    const auto cls = static_cast<ActivityClass>(c);
    const measured::ClassTotal& m = meas.of(cls);
    const measured::ClassTotal& s = sim.of(cls);
    if (m.count == 0 && s.count == 0) continue;
    json row = pair(m.time_s, s.time_s);
    row["class"] = std::string(measured::to_string(cls));
    row["measured_count"] = m.count;
    row["simulated_count"] = s.count;
    classes.push_back(row);
  }

  json top_kernels = json::array();
  for (size_t k = 0; k < std::min(context.top_kernels, trace.kernels.size()); ++k) {
    const measured::KernelTotal& kernel = trace.kernels[k];
    top_kernels.push_back({{"name", kernel.name},
                           {"class", std::string(measured::to_string(kernel.cls))},
                           {"time_s", kernel.time_s},
                           {"count", kernel.count}});
  }

  const bool comms_recorded = !trace.comms.empty() || trace.comms_unknown > 0;
  const json comm = comms_recorded ? communication(trace, run.plan, run.graph(index)) : json::array();

  json notes = json::array();
  if (rank_run.rank != context.rank) {
    notes.push_back(fmt::format("rank {} is not simulated; rank {} of the same pipeline stage stands for it",
                                context.rank, rank_run.rank));
  }
  if (trace.rank && *trace.rank != context.rank) {
    notes.push_back(fmt::format("the trace says it was taken on rank {}, not {}", *trace.rank, context.rank));
  }
  if (trace.world_size && *trace.world_size != run.plan.world_size()) {
    notes.push_back(fmt::format("the trace's job had {} ranks, the scenario's plan {}", *trace.world_size,
                                run.plan.world_size()));
  }
  if (!trace.other_devices.empty()) {
    notes.push_back(fmt::format("the trace also holds device(s) {}; device {} was read",
                                fmt::join(trace.other_devices, ", "), trace.device));
  }
  if (trace.unattributed > 0) {
    notes.push_back(
        fmt::format("{} GPU activities were launched outside every profiled step and are not counted",
                    trace.unattributed));
  }
  if (!comms_recorded) {
    notes.push_back(
        "the trace has no record_param_comms events (PyTorch records them for torch.distributed "
        "calls in recent versions): communication volumes are not compared");
  } else if (trace.comms_unknown > 0) {
    notes.push_back(fmt::format(
        "{} communication call(s) of the kept steps name a collective or dtype the comparison does "
        "not know and are not counted",
        trace.comms_unknown));
  }
  if (run.plan.degree(workload::Axis::kPp) > 1) {
    notes.push_back(
        "pipeline parallelism: the simulation posts a pipeline receive as soon as its stream allows, a "
        "framework where its program needs it, so the send/recv time (waiting for the peer included) "
        "is not comparable; the exposed communication is (a bubble is a receive waiting on both sides)");
  }
  if (const std::string why = infeasibility(run_report); !why.empty()) {
    notes.push_back(fmt::format("the simulation says the plan does not fit: {}", why));
  }

  const json suggested = what_ifs(scenario, meas, sim, notes);

  json provenance = run_report.at("provenance");
  provenance["command_line"] = context.command_line;
  provenance["trace"] = context.trace_file;
  return {
      {"schema_version", 1},
      {"provenance", provenance},
      {"scenario", scenario.name},
      {"trace", context.trace_file},
      {"rank", context.rank},
      {"simulated_rank", rank_run.rank},
      {"device", trace.device},
      {"network", context.network},
      {"iterations", context.iterations},
      {"steps", trace.step_names},
      {"skipped_steps", trace.skipped_steps},
      {"step_time_s", step_time},
      {"breakdown",
       {{"compute_s", pair(meas.compute_s, sim.compute_s)},
        {"exposed_comm_s", pair(meas.exposed_comm_s, sim.exposed_comm_s)},
        {"exposed_copy_s", pair(meas.exposed_copy_s, sim.exposed_copy_s)},
        {"idle_s", pair(meas.idle_s, sim.idle_s)}}},
      {"classes", classes},
      {"communication", comm},
      {"top_kernels", top_kernels},
      {"what_ifs", suggested},
      {"notes", notes},
  };
}

std::string render_compare_table(const json& report) {
  const json& steps = report.at("steps");
  std::string out =
      fmt::format("# {} against {} (rank {}, device {}; {} step(s)", report.at("scenario").get<std::string>(),
                  report.at("trace").get<std::string>(), report.at("rank").get<int64_t>(),
                  report.at("device").get<int64_t>(), steps.size());
  if (!steps.empty()) {
    out += fmt::format(": {}{}", steps.front().get<std::string>(),
                       steps.size() > 1 ? fmt::format(" .. {}", steps.back().get<std::string>()) : "");
  }
  out += fmt::format("; simulated rank {})\n", report.at("simulated_rank").get<int64_t>());
  const json& t = report.at("step_time_s");
  out += fmt::format("{:<28} {:>12} {:>12} {:>9}\n", "", "measured", "simulated", "error");
  out +=
      fmt::format("{:<28} {:>12.6f} {:>12.6f} {:>9}   (measured {:.6f} .. {:.6f})\n", "step time (s)",
                  t.at("measured").get<double>(), t.at("simulated").get<double>(), error_text(t.at("error")),
                  t.at("measured_min").get<double>(), t.at("measured_max").get<double>());
  out += "\n# where the step went (s)\n";
  for (const auto& [key, label] :
       {std::pair{"compute_s", "compute"}, std::pair{"exposed_comm_s", "exposed communication"},
        std::pair{"exposed_copy_s", "exposed host copy"}, std::pair{"idle_s", "idle"}}) {
    const json& b = report.at("breakdown").at(key);
    out += fmt::format("{:<28} {:>12.6f} {:>12.6f} {:>9}\n", label, b.at("measured").get<double>(),
                       b.at("simulated").get<double>(), error_text(b.at("error")));
  }
  out += "\n# GPU time by kernel class (s per step; activities per step)\n";
  using Align = TextTable::Align;
  TextTable classes({{"class", Align::kLeft, 28},
                     {"measured", Align::kRight, 12},
                     {"simulated", Align::kRight, 12},
                     {"error", Align::kRight, 9},
                     {"measured", Align::kRight, 10},
                     {"simulated", Align::kRight, 10}});
  for (const json& c : report.at("classes")) {
    classes.add_row({c.at("class").get<std::string>(), fmt::format("{:.6f}", c.at("measured").get<double>()),
                     fmt::format("{:.6f}", c.at("simulated").get<double>()), error_text(c.at("error")),
                     fmt::format("{:.0f}", c.at("measured_count").get<double>()),
                     fmt::format("{:.0f}", c.at("simulated_count").get<double>())});
  }
  out += classes.render();
  if (!report.at("communication").empty()) {
    out +=
        "\n# communication per step, by collective and group size (bytes as nccl-tests counts a message)\n";
    TextTable communication({{"kind", Align::kLeft, 16},
                             {"group", Align::kRight, 6},
                             {"calls", Align::kRight, 10},
                             {"simulated", Align::kRight, 10},
                             {"bytes", Align::kRight, 14},
                             {"simulated", Align::kRight, 14},
                             {"error", Align::kRight, 9}});
    for (const json& c : report.at("communication")) {
      communication.add_row(
          {c.at("kind").get<std::string>(), std::to_string(c.at("group_size").get<int64_t>()),
           fmt::format("{:.1f}", c.at("measured_calls").get<double>()),
           fmt::format("{:.1f}", c.at("simulated_calls").get<double>()),
           fmt::format("{:.4g}", c.at("measured").get<double>()),
           fmt::format("{:.4g}", c.at("simulated").get<double>()), error_text(c.at("error"))});
    }
    out += communication.render();
  }
  if (!report.at("top_kernels").empty()) {
    const double step_s = t.at("measured").get<double>();
    out += "\n# the measured kernels that took longest (s per step, share of the step, launches per step)\n";
    for (const json& k : report.at("top_kernels")) {
      std::string name = k.at("name").get<std::string>();
      if (name.size() > 90) name = name.substr(0, 87) + "...";
      const double time_s = k.at("time_s").get<double>();
      out += fmt::format("{:>12.6f} {:>6.1f}% {:>7.0f}  {:<22} {}\n", time_s,
                         step_s > 0 ? 100 * time_s / step_s : 0, k.at("count").get<double>(),
                         k.at("class").get<std::string>(), name);
    }
  }
  if (!report.at("what_ifs").empty()) {
    out += "\n# what-ifs that would match each mispriced class (first order: rerun with them to check)\n";
    for (const json& w : report.at("what_ifs")) {
      std::string set;
      for (const json& arg : w.at("set")) set += " --set " + arg.get<std::string>();
      out += fmt::format("{:<14} measured {:.3f}x the simulated time:{}\n", w.at("class").get<std::string>(),
                         w.at("measured_over_simulated").get<double>(), set);
    }
  }
  if (!report.at("notes").empty()) {
    out += "\n# notes\n";
    for (const json& n : report.at("notes")) out += fmt::format("- {}\n", n.get<std::string>());
  }
  return out;
}

json make_ranks_report(const std::vector<json>& comparisons) {
  json rows = json::array();
  size_t longest = 0;
  for (size_t i = 0; i < comparisons.size(); ++i) {
    const json& c = comparisons[i];
    const json& b = c.at("breakdown");
    rows.push_back({{"rank", c.at("rank")},
                    {"simulated_rank", c.at("simulated_rank")},
                    {"trace", c.at("trace")},
                    {"step_time_s", c.at("step_time_s")},
                    {"compute_s", b.at("compute_s")},
                    {"exposed_comm_s", b.at("exposed_comm_s")},
                    {"idle_s", b.at("idle_s")}});
    if (c.at("step_time_s").at("measured").get<double>() >
        comparisons[longest].at("step_time_s").at("measured").get<double>()) {
      longest = i;
    }
  }
  json provenance = comparisons.front().at("provenance");
  provenance["trace"] = json::array();
  for (const json& c : comparisons) provenance["trace"].push_back(c.at("trace"));
  return {{"schema_version", 1},
          {"provenance", provenance},
          {"scenario", comparisons.front().at("scenario")},
          {"ranks", rows},
          {"longest", comparisons[longest]},
          {"comparisons", comparisons}};
}

std::string render_ranks_table(const json& report) {
  const json& rows = report.at("ranks");
  std::string out = fmt::format("# {} against {} traces: per rank, measured / simulated (s)\n",
                                report.at("scenario").get<std::string>(), rows.size());
  TextTable table({{"rank", TextTable::Align::kRight, 6},
                   {"simulated", TextTable::Align::kRight, 9},
                   {"step", TextTable::Align::kRight, 21},
                   {"error", TextTable::Align::kRight, 8},
                   {"compute", TextTable::Align::kRight, 21},
                   {"exposed comm", TextTable::Align::kRight, 21},
                   {"idle", TextTable::Align::kRight, 21}});
  const auto both = [](const json& pair) {
    return fmt::format("{:.4f} / {:.4f}", pair.at("measured").get<double>(),
                       pair.at("simulated").get<double>());
  };
  for (const json& r : rows) {
    table.add_row({std::to_string(r.at("rank").get<int64_t>()),
                   std::to_string(r.at("simulated_rank").get<int64_t>()), both(r.at("step_time_s")),
                   error_text(r.at("step_time_s").at("error")), both(r.at("compute_s")),
                   both(r.at("exposed_comm_s")), both(r.at("idle_s"))});
  }
  out += table.render();
  out += "\n# the rank whose measured step is longest, in full\n";
  return out + render_compare_table(report.at("longest"));
}

}  // namespace trainsim::report
