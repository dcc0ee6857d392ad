#include "sim/cluster/report.h"

#include <algorithm>
#include <array>
#include <map>
#include <numeric>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "sim/common/text_table.h"
#include "sim/engine/provenance.h"
#include "sim/report/comm_log.h"
#include "sim/report/inputs.h"
#include "sim/report/link_report.h"
#include "sim/report/run_report.h"

namespace trainsim::cluster {
namespace {

using nlohmann::json;

// Collectives listed per job, those whose time grew most.
constexpr size_t kSlowedShown = 3;

// The durations of a job's iterations that ran entirely while every job was running: begun at or
// after the last job's start, ended by the end of the window; its first left out when more than one
// was asked for.
std::vector<double> contended(const std::vector<double>& ends, double start_s, double latest_start_s,
                              double window_s, int iterations) {
  std::vector<double> out;
  for (size_t i = iterations > 1 ? 1 : 0; i < ends.size(); ++i) {
    const double begin = i == 0 ? start_s : ends[i - 1];
    if (begin >= latest_start_s && ends[i] <= window_s) out.push_back(ends[i] - begin);
  }
  return out;
}

// The collectives (kind, group, size) of both communication logs whose total time over the
// iteration grew, the largest growth first, at most kSlowedShown.
std::vector<SlowedCollective> slowed_collectives(const json& alone, const json& shared) {
  using Key = std::tuple<std::string, std::string, double>;
  const auto key_of = [](const report::CommRecord& c) { return Key{c.kind, c.group, c.bytes_per_call}; };
  std::map<Key, report::CommRecord> before;
  for (report::CommRecord& c : report::comm_records(alone.at("comm")))
    before.emplace(key_of(c), std::move(c));
  std::vector<SlowedCollective> grown;
  for (report::CommRecord& c : report::comm_records(shared.at("comm"))) {
    const auto it = before.find(key_of(c));
    if (it != before.end() && c.time_s > it->second.time_s) grown.push_back({it->second, std::move(c)});
  }
  std::stable_sort(grown.begin(), grown.end(), [](const SlowedCollective& x, const SlowedCollective& y) {
    return x.added_time_s() > y.added_time_s();
  });
  if (grown.size() > kSlowedShown) grown.resize(kSlowedShown);
  return grown;
}

json to_json(const SlowedCollective& c) {
  return {{"kind", c.shared.kind},
          {"group", c.shared.group},
          {"group_size", c.shared.group_size},
          {"bytes_per_call", c.shared.bytes_per_call},
          {"calls", c.shared.calls},
          {"alone_mean_time_s", c.alone.mean_time_s},
          {"shared_mean_time_s", c.shared.mean_time_s},
          {"alone_busbw_bytes_per_s", c.alone.busbw_bytes_per_s},
          {"shared_busbw_bytes_per_s", c.shared.busbw_bytes_per_s},
          {"added_time_s", c.added_time_s()}};
}

json to_json(const JobTiming& t) {
  return {{"iteration_time_s", t.iteration_time_s},
          {"tokens_per_s", t.tokens_per_s},
          {"mfu", t.mfu},
          {"breakdown", report::to_json(t.breakdown)}};
}

json to_json(const JobOutcome& job) {
  json shared = to_json(job.shared);
  shared.update({{"iterations", job.shared_iterations},
                 {"min_iteration_s", job.min_iteration_s},
                 {"max_iteration_s", job.max_iteration_s}});
  json slowed = json::array();
  for (const SlowedCollective& c : job.slowed) slowed.push_back(to_json(c));
  return {
      {"name", job.name},        {"scenario", job.scenario},         {"gpus", job.gpus},
      {"nodes", job.nodes},      {"start_s", job.start_s},           {"alone", to_json(job.alone)},
      {"shared", shared},        {"slowdown", job.slowdown()},       {"slowed_collectives", slowed},
      {"fits", job.memory.fits}, {"alone_report", job.alone_report}, {"shared_report", job.shared_report}};
}

std::string seconds(double s) { return fmt::format("{:.4f}", s); }

}  // namespace

ClusterReport make_cluster_report(const ClusterFile& file, const ClusterRuns& cluster_runs,
                                  const report::ReportContext& context) {
  ClusterReport out;
  out.context = context;
  const std::vector<JobRuns>& runs = cluster_runs.jobs;
  double window = 0;
  double latest_start = 0;
  for (size_t j = 0; j < runs.size(); ++j) {
    window = std::max(window, runs[j].shared.iteration_end_s.at(static_cast<size_t>(context.iterations - 1)));
    latest_start = std::max(latest_start, file.jobs[j].start_s);
  }
  std::set<std::string> seen;
  const auto warn = [&](const std::string& w) {
    if (seen.insert(w).second) out.warnings.push_back(w);
  };
  if (context.network == "ideal") {
    warn(
        "network model: ideal, which is contention-free: the jobs cannot slow each other; use --network "
        "simgrid");
  }
  if (!context.full) {
    warn(
        "collapsed run: each job simulates one rank per symmetry class and plays the others' traffic with "
        "it, those ranks keeping pace with the simulated ones; drop --collapsed to simulate every rank");
  }
  for (size_t j = 0; j < runs.size(); ++j) {
    const ClusterJob& job = file.jobs[j];
    JobOutcome o;
    o.name = job.name;
    o.scenario = job.scenario.path.filename().string();
    o.gpus = job.scenario.cluster.gpus;
    o.nodes = job.nodes;
    o.start_s = job.start_s;
    o.alone_report = runs[j].alone.report;
    o.shared_report = runs[j].shared.report;
    const report::RunMetrics alone = report::run_metrics(o.alone_report);
    const report::RunMetrics shared = report::run_metrics(o.shared_report);
    std::vector<double> times =
        contended(runs[j].shared.iteration_end_s, job.start_s, latest_start, window, context.iterations);
    if (times.empty()) {
      times.push_back(shared.iteration_time_s);
      warn(fmt::format(
          "job {} ran no iteration entirely while every other job was running; its shared time is its "
          "iteration {} (raise --iterations or move its start)",
          job.name, context.iterations));
    }
    const double t_shared =
        std::accumulate(times.begin(), times.end(), 0.0) / static_cast<double>(times.size());
    const double tokens =
        static_cast<double>(job.scenario.training.global_batch * job.scenario.model.seq_len);
    for (const json& w : o.shared_report.at("warnings")) {
      warn(fmt::format("job {}: {}", job.name, w.get<std::string>()));
    }
    o.alone = {alone.iteration_time_s, tokens / alone.iteration_time_s, alone.mfu, alone.breakdown};
    o.shared = {t_shared, tokens / t_shared, alone.mfu * alone.iteration_time_s / t_shared, shared.breakdown};
    o.shared_iterations = times.size();
    o.min_iteration_s = *std::min_element(times.begin(), times.end());
    o.max_iteration_s = *std::max_element(times.begin(), times.end());
    o.slowed = slowed_collectives(o.alone_report, o.shared_report);
    o.memory = shared.memory;
    out.jobs.push_back(std::move(o));
  }
  json scenarios = json::array();
  for (const ClusterJob& job : file.jobs) {
    scenarios.push_back({{"job", job.name},
                         {"path", job.scenario.path.filename().string()},
                         {"hash", job.scenario.content_hash}});
  }
  out.provenance = engine::provenance(context.command_line);
  out.provenance["inputs"] = {
      {"cluster", {{"path", file.path.filename().string()}, {"hash", file.content_hash}}},
      {"topology", report::topology_input(file.topology)},
      {"hardware", report::hardware_input(file.hardware)},
      {"scenarios", scenarios}};
  out.provenance["options"] = {
      {"network", context.network}, {"full", context.full}, {"iterations", context.iterations}};
  out.cluster = file.name;
  out.topology = file.topology.name;
  out.nodes = file.topology.fabric.nodes;
  out.gpus_per_node = file.topology.node.gpus;
  out.placement = std::string(config::to_string(file.placement));
  out.idle_nodes = file.idle_nodes();
  out.window_s = window;
  out.links = cluster_runs.links;
  return out;
}

json to_json(const ClusterReport& report) {
  json jobs = json::array();
  for (const JobOutcome& job : report.jobs) jobs.push_back(to_json(job));
  json out = {
      {"schema_version", 1},           {"provenance", report.provenance},
      {"cluster", report.cluster},     {"topology", report.topology},
      {"nodes", report.nodes},         {"gpus_per_node", report.gpus_per_node},
      {"placement", report.placement}, {"idle_nodes", report.idle_nodes},
      {"window_s", report.window_s},   {"jobs", jobs},
      {"warnings", report.warnings},
  };
  if (report.links) out["links"] = report::to_json(*report.links);
  return out;
}

std::string cluster_infeasibility(const ClusterReport& report) {
  std::string out;
  for (const JobOutcome& job : report.jobs) {
    const std::string why = report::infeasibility(job.memory);
    if (why.empty()) continue;
    if (!out.empty()) out += "; ";
    out += fmt::format("job {}: {}", job.name, why);
  }
  return out;
}

std::string render_cluster_table(const ClusterReport& report) {
  const report::ReportContext& context = report.context;
  const int iterations = context.iterations;
  std::string out = fmt::format(
      "# trainsim cluster {} ({}: {} nodes of {} GPU{}), network {}, {}\n", report.cluster, report.topology,
      report.nodes, report.gpus_per_node, report.gpus_per_node == 1 ? "" : "s", context.network,
      context.full ? "every rank simulated" : "one rank per symmetry class simulated");
  using Align = TextTable::Align;
  TextTable jobs({{"job", Align::kLeft, 24},
                  {"gpus", Align::kRight, 6},
                  {"start s", Align::kRight, 8},
                  {"alone s", Align::kRight, 10},
                  {"shared s", Align::kRight, 10},
                  {"slowdown", Align::kRight, 9},
                  {"iters", Align::kRight, 6},
                  {"tokens/s", Align::kRight, 12},
                  {"MFU", Align::kRight, 7},
                  {" nodes", Align::kLeft}});
  for (const JobOutcome& job : report.jobs) {
    jobs.add_row({job.name, std::to_string(job.gpus), fmt::format("{:.3f}", job.start_s),
                  fmt::format("{:.4f}", job.alone.iteration_time_s),
                  fmt::format("{:.4f}", job.shared.iteration_time_s), fmt::format("{:.3f}x", job.slowdown()),
                  std::to_string(job.shared_iterations), fmt::format("{:.1f}", job.shared.tokens_per_s),
                  fmt::format("{:.1f}%", 100 * job.shared.mfu), fmt::format(" {}", node_ranges(job.nodes))});
  }
  out += jobs.render();
  out += fmt::format("idle nodes: {} of {}{}\n", report.idle_nodes.size(), report.nodes,
                     report.idle_nodes.empty() ? "" : " (" + node_ranges(report.idle_nodes) + ")");
  const std::string why = cluster_infeasibility(report);
  out += fmt::format("memory: {}\n", why.empty() ? "every job fits" : why);
  out += fmt::format(
      "shared s: the mean of the job's iterations (iters) that ran entirely while every job was running, "
      "after its first; every job had run {} iteration{} by {:.4f} s; tokens/s and MFU are the shared "
      "run's\n",
      iterations, iterations == 1 ? "" : "s", report.window_s);
  out += report::render_what_if(report.provenance.at("inputs"));

  out +=
      fmt::format("\n# where the time went (critical rank, iteration {}; s, alone -> shared)\n", iterations);
  TextTable parts({{"job", Align::kLeft, 24}});
  for (const char* part : {"compute", "exposed comm", "bubble", "offload stall", "idle"}) {
    parts.add_column({part, Align::kRight, 19});
  }
  for (const JobOutcome& job : report.jobs) {
    std::vector<std::string> row = {job.name};
    for (const report::BreakdownPart& part : report::kBreakdownParts) {
      row.push_back(seconds(job.alone.breakdown.*part.seconds) + " -> " +
                    seconds(job.shared.breakdown.*part.seconds));
    }
    parts.add_row(std::move(row));
  }
  out += parts.render();

  const bool any_slowed = std::any_of(report.jobs.begin(), report.jobs.end(),
                                      [](const JobOutcome& j) { return !j.slowed.empty(); });
  if (any_slowed) {
    out += fmt::format(
        "\n# collectives that slowed down most (critical rank, iteration {}; mean per call, alone -> "
        "shared)\n",
        iterations);
    TextTable slowed({{"job", Align::kLeft, 24},
                      {"kind", Align::kRight, 14},
                      {"group", Align::kRight, 8},
                      {"(ranks)", Align::kRight, 7},
                      {"size (B)", Align::kRight, 12},
                      {"calls", Align::kRight, 6},
                      {"alone us", Align::kRight, 12},
                      {"shared us", Align::kRight, 12},
                      {"busbw GB/s", Align::kRight, 20}});
    for (const JobOutcome& job : report.jobs) {
      for (const SlowedCollective& c : job.slowed) {
        slowed.add_row({job.name, c.shared.kind, c.shared.group, std::to_string(c.shared.group_size),
                        fmt::format("{:.0f}", c.shared.bytes_per_call), std::to_string(c.shared.calls),
                        fmt::format("{:.1f}", 1e6 * c.alone.mean_time_s),
                        fmt::format("{:.1f}", 1e6 * c.shared.mean_time_s),
                        fmt::format("{:.1f} -> {:.1f}", c.alone.busbw_bytes_per_s / 1e9,
                                    c.shared.busbw_bytes_per_s / 1e9)});
      }
    }
    out += slowed.render();
  }
  if (report.links) {
    std::vector<std::string> names;
    for (const JobOutcome& job : report.jobs) names.push_back(job.name);
    out += '\n';
    out += report::render_links(*report.links, names);
  }
  if (!report.warnings.empty()) {
    out += "\n# warnings\n";
    for (const std::string& w : report.warnings) out += "- " + w + "\n";
  }
  return out;
}

}  // namespace trainsim::cluster
