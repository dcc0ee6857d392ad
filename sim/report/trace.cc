#include "sim/report/trace.h"

#include <functional>
#include <map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "sim/config/units.h"
#include "sim/report/power.h"

namespace trainsim::report {

using nlohmann::json;
using workload::OpKind;

namespace {

std::string trace_name(const workload::Op& op) {
  std::string name = fmt::format("{} {}", workload::to_string(op.label), workload::to_string(op.kind));
  if (op.kind == OpKind::kCollective) {
    name = fmt::format("{} {} {} {}", workload::to_string(op.label), workload::to_string(op.collective.kind),
                       workload::to_string(op.collective.group.kind),
                       config::format_quantity(op.bytes, config::QuantityKind::kBytes));
  } else if (op.phase != workload::Phase::kSetup) {
    name += fmt::format(" {}", workload::to_string(op.phase));
  }
  if (op.layer >= 0) name += fmt::format(" L{}", op.layer);
  if (op.micro_batch >= 0) name += fmt::format(" mb{}", op.micro_batch);
  return name;
}

// Writes the events of one job's simulated ranks (those of `ranks`, all when empty): its node n is
// process nodes[n] (n itself when `nodes` is empty), named after its node and the job.
void emit_part(const TracePart& part, const TraceOptions& options,
               const std::function<void(const json&)>& emit) {
  const std::set<int64_t>& ranks = options.ranks;
  const config::Scenario& scenario = *part.scenario;
  const engine::ScenarioRun& run = *part.run;
  const int64_t gpus_per_node = scenario.cluster.topology.node.gpus;
  const std::string suffix = part.job.empty() ? "" : fmt::format(", job {}", part.job);
  const std::string flow_prefix = part.job.empty() ? "" : part.job + ":";
  std::set<int64_t> named_nodes;
  for (size_t i = 0; i < run.ranks.size(); ++i) {
    const int64_t rank = run.ranks[i];
    if (!ranks.empty() && ranks.count(rank) == 0) continue;
    const workload::Graph& graph = run.graph(i);
    const workload::Renaming renaming = run.renaming(i);
    const engine::RankRun& rr = run.result.ranks[i];
    const int64_t job_node = rank / gpus_per_node;
    const int64_t node = part.nodes.empty() ? job_node : part.nodes[static_cast<size_t>(job_node)];
    const int64_t gpu = rank % gpus_per_node;
    if (named_nodes.insert(node).second) {
      emit({{"ph", "M"},
            {"name", "process_name"},
            {"pid", node},
            {"args", {{"name", fmt::format("node{} ({} GPUs{})", node, gpus_per_node, suffix)}}}});
      emit({{"ph", "M"}, {"name", "process_sort_index"}, {"pid", node}, {"args", {{"sort_index", node}}}});
    }
    // Track 2 s of a GPU is stream s, 2 s + 1 the receives on it (named once it has one).
    std::set<int64_t> named_tracks;
    const auto name_track = [&](int stream, bool receives) {
      const int64_t tid = 2 * (gpu * workload::kStreamCount + stream) + receives;
      if (!named_tracks.insert(tid).second) return tid;
      const std::string_view stream_name = workload::to_string(static_cast<workload::Stream>(stream));
      emit({{"ph", "M"},
            {"name", "thread_name"},
            {"pid", node},
            {"tid", tid},
            {"args", {{"name", fmt::format("rank {} {}{}", rank, stream_name, receives ? " recv" : "")}}}});
      emit({{"ph", "M"},
            {"name", "thread_sort_index"},
            {"pid", node},
            {"tid", tid},
            {"args", {{"sort_index", tid}}}});
      return tid;
    };
    for (int s = 0; s < workload::kStreamCount; ++s) name_track(s, false);
    for (workload::OpId id = 0; id < graph.size(); ++id) {
      const workload::Op& op = graph.op(id);
      if (op.kind == OpKind::kAlloc || op.kind == OpKind::kFree) continue;
      const int64_t tid = name_track(static_cast<int>(op.stream), op.kind == OpKind::kRecv);
      const double ts = rr.launch_s[id] * 1e6;
      json args = {
          {"op", id}, {"bytes", op.bytes}, {"flops", op.flops}, {"phase", workload::to_string(op.phase)}};
      if (op.layer >= 0) args["layer"] = op.layer;
      if (op.micro_batch >= 0) args["micro_batch"] = op.micro_batch;
      if (op.kind == OpKind::kCollective) {
        args["collective"] = workload::to_string(op.collective.kind);
        args["group"] = workload::to_string(op.collective.group.kind);
        args["group_size"] = run.plan.group_size(op.collective.group.kind);
      }
      if (rr.launch_s[id] > rr.start_s[id]) args["waited_us"] = (rr.launch_s[id] - rr.start_s[id]) * 1e6;
      emit({{"ph", "X"},
            {"name", trace_name(op)},
            {"pid", node},
            {"tid", tid},
            {"ts", ts},
            {"dur", (rr.end_s[id] - rr.launch_s[id]) * 1e6},
            {"args", args}});
      if (op.kind == OpKind::kSend || op.kind == OpKind::kRecv) {
        const int64_t peer = renaming.peer(op.p2p.peer);
        const int64_t src = op.kind == OpKind::kSend ? rank : peer;
        const int64_t dst = op.kind == OpKind::kSend ? peer : rank;
        emit({{"ph", op.kind == OpKind::kSend ? "s" : "f"},
              {"name", "p2p"},
              {"cat", "p2p"},
              {"id", fmt::format("{}{}-{}-{}", flow_prefix, src, dst, op.p2p.tag)},
              {"pid", node},
              {"tid", tid},
              {"ts", op.kind == OpKind::kSend ? ts : rr.end_s[id] * 1e6},
              {"bp", "e"}});
      }
    }
    if (!options.counters) continue;
    for (const auto& [time, bytes] : rr.hbm_samples) {
      emit({{"ph", "C"},
            {"name", fmt::format("HBM rank {}", rank)},
            {"pid", node},
            {"ts", time * 1e6},
            {"args", {{"GiB", bytes / (1024.0 * 1024 * 1024)}}}});
    }
    if (const std::optional<config::GpuPower>& power = scenario.cluster.hardware.power) {
      const engine::EngineResult& r = run.result;
      const std::vector<PowerSpan> spans =
          gpu_states(graph, rr, r.total_time_s - r.iteration_time_s, r.total_time_s);
      for (const PowerSpan& span : spans) {
        emit({{"ph", "C"},
              {"name", fmt::format("power rank {}", rank)},
              {"pid", node},
              {"ts", span.start_s * 1e6},
              {"args", {{"W", state_power_w(*power, span.state)}}}});
      }
    }
  }
}

// The trace around the events `body` emits.
size_t write_trace(const std::string& name, std::ostream& out,
                   const std::function<void(const std::function<void(const json&)>&)>& body) {
  size_t events = 0;
  out << "{\"displayTimeUnit\":\"ns\",\"otherData\":" << json{{"scenario", name}}.dump()
      << ",\"traceEvents\":[\n";
  body([&](const json& event) { out << (events++ == 0 ? "" : ",\n") << event.dump(); });
  out << "\n]}\n";
  return events;
}

}  // namespace

size_t write_chrome_trace(const config::Scenario& scenario, const engine::ScenarioRun& run,
                          const TraceOptions& options, std::ostream& out) {
  return write_trace(scenario.name, out, [&](const auto& emit) {
    emit_part(TracePart{&scenario, &run, {}, ""}, options, emit);
  });
}

size_t write_chrome_trace(const std::vector<TracePart>& parts, const std::string& name, std::ostream& out) {
  return write_trace(name, out, [&](const auto& emit) {
    for (const TracePart& part : parts) emit_part(part, TraceOptions{}, emit);
  });
}

}  // namespace trainsim::report
