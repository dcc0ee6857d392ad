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
json slowed_collectives(const json& alone, const json& shared) {
  using Key = std::tuple<std::string, std::string, double>;
  const auto key_of = [](const report::CommRecord& c) { return Key{c.kind, c.group, c.bytes_per_call}; };
  std::map<Key, report::CommRecord> before;
  for (report::CommRecord& c : report::comm_records(alone.at("comm")))
    before.emplace(key_of(c), std::move(c));
  std::vector<std::pair<double, json>> grown;
  for (const report::CommRecord& c : report::comm_records(shared.at("comm"))) {
    const auto it = before.find(key_of(c));
    if (it == before.end()) continue;
    const report::CommRecord& a = it->second;
    const double added = c.time_s - a.time_s;
    if (added <= 0) continue;
    grown.emplace_back(added, json{{"kind", c.kind},
                                   {"group", c.group},
                                   {"group_size", c.group_size},
                                   {"bytes_per_call", c.bytes_per_call},
                                   {"calls", c.calls},
                                   {"alone_mean_time_s", a.mean_time_s},
                                   {"shared_mean_time_s", c.mean_time_s},
                                   {"alone_busbw_bytes_per_s", a.busbw_bytes_per_s},
                                   {"shared_busbw_bytes_per_s", c.busbw_bytes_per_s},
                                   {"added_time_s", added}});
  }
  std::stable_sort(grown.begin(), grown.end(),
                   [](const auto& x, const auto& y) { return x.first > y.first; });
  json out = json::array();
  for (size_t i = 0; i < grown.size() && i < kSlowedShown; ++i) out.push_back(grown[i].second);
  return out;
}

std::string seconds(double s) { return fmt::format("{:.4f}", s); }

}  // namespace

json make_cluster_report(const ClusterFile& file, const ClusterRuns& cluster_runs,
                         const report::ReportContext& context) {
  const std::vector<JobRuns>& runs = cluster_runs.jobs;
  double window = 0;
  double latest_start = 0;
  for (size_t j = 0; j < runs.size(); ++j) {
    window = std::max(window, runs[j].shared.iteration_end_s.at(static_cast<size_t>(context.iterations - 1)));
    latest_start = std::max(latest_start, file.jobs[j].start_s);
  }
  json warnings = json::array();
  std::set<std::string> seen;
  const auto warn = [&](const std::string& w) {
    if (seen.insert(w).second) warnings.push_back(w);
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
  json jobs = json::array();
  for (size_t j = 0; j < runs.size(); ++j) {
    const ClusterJob& job = file.jobs[j];
    const json& alone = runs[j].alone.report;
    const json& shared = runs[j].shared.report;
    const report::RunMetrics alone_metrics = report::run_metrics(alone);
    const report::RunMetrics shared_metrics = report::run_metrics(shared);
    std::vector<double> times =
        contended(runs[j].shared.iteration_end_s, job.start_s, latest_start, window, context.iterations);
    if (times.empty()) {
      times.push_back(shared_metrics.iteration_time_s);
      warn(fmt::format(
          "job {} ran no iteration entirely while every other job was running; its shared time is its "
          "iteration {} (raise --iterations or move its start)",
          job.name, context.iterations));
    }
    const double t_shared =
        std::accumulate(times.begin(), times.end(), 0.0) / static_cast<double>(times.size());
    const double t_alone = alone_metrics.iteration_time_s;
    const double tokens =
        static_cast<double>(job.scenario.training.global_batch * job.scenario.model.seq_len);
    for (const json& w : shared.at("warnings"))
      warn(fmt::format("job {}: {}", job.name, w.get<std::string>()));
    jobs.push_back({
        {"name", job.name},
        {"scenario", job.scenario.path.filename().string()},
        {"gpus", job.scenario.cluster.gpus},
        {"nodes", job.nodes},
        {"start_s", job.start_s},
        {"alone",
         {{"iteration_time_s", t_alone},
          {"tokens_per_s", tokens / t_alone},
          {"mfu", alone_metrics.mfu},
          {"breakdown", report::to_json(alone_metrics.breakdown)}}},
        {"shared",
         {{"iteration_time_s", t_shared},
          {"tokens_per_s", tokens / t_shared},
          {"mfu", alone_metrics.mfu * t_alone / t_shared},
          {"iterations", times.size()},
          {"min_iteration_s", *std::min_element(times.begin(), times.end())},
          {"max_iteration_s", *std::max_element(times.begin(), times.end())},
          {"breakdown", report::to_json(shared_metrics.breakdown)}}},
        {"slowdown", t_shared / t_alone},
        {"slowed_collectives", slowed_collectives(alone, shared)},
        {"fits", shared_metrics.memory.fits},
        {"alone_report", alone},
        {"shared_report", shared},
    });
  }
  json scenarios = json::array();
  for (const ClusterJob& job : file.jobs) {
    scenarios.push_back({{"job", job.name},
                         {"path", job.scenario.path.filename().string()},
                         {"hash", job.scenario.content_hash}});
  }
  json provenance = engine::provenance(context.command_line);
  provenance["inputs"] = {{"cluster", {{"path", file.path.filename().string()}, {"hash", file.content_hash}}},
                          {"topology", report::topology_input(file.topology)},
                          {"hardware", report::hardware_input(file.hardware)},
                          {"scenarios", scenarios}};
  provenance["options"] = {
      {"network", context.network}, {"full", context.full}, {"iterations", context.iterations}};
  json out = {
      {"schema_version", 1},
      {"provenance", provenance},
      {"cluster", file.name},
      {"topology", file.topology.name},
      {"nodes", file.topology.fabric.nodes},
      {"gpus_per_node", file.topology.node.gpus},
      {"placement", std::string(config::to_string(file.placement))},
      {"idle_nodes", file.idle_nodes()},
      {"window_s", window},
      {"jobs", jobs},
      {"warnings", warnings},
  };
  if (!cluster_runs.links.is_null()) out["links"] = cluster_runs.links;
  return out;
}

std::string cluster_infeasibility(const json& report) {
  std::string out;
  for (const json& job : report.at("jobs")) {
    const std::string why = report::infeasibility(job.at("shared_report"));
    if (why.empty()) continue;
    if (!out.empty()) out += "; ";
    out += fmt::format("job {}: {}", job.at("name").get<std::string>(), why);
  }
  return out;
}

std::string render_cluster_table(const json& report) {
  const json& options = report.at("provenance").at("options");
  const int iterations = options.at("iterations").get<int>();
  const int64_t per_node = report.at("gpus_per_node").get<int64_t>();
  std::string out = fmt::format(
      "# trainsim cluster {} ({}: {} nodes of {} GPU{}), network {}, {}\n",
      report.at("cluster").get<std::string>(), report.at("topology").get<std::string>(),
      report.at("nodes").get<int64_t>(), per_node, per_node == 1 ? "" : "s",
      options.at("network").get<std::string>(),
      options.at("full").get<bool>() ? "every rank simulated" : "one rank per symmetry class simulated");
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
  for (const json& job : report.at("jobs")) {
    const json& shared = job.at("shared");
    jobs.add_row({job.at("name").get<std::string>(), std::to_string(job.at("gpus").get<int64_t>()),
                  fmt::format("{:.3f}", job.at("start_s").get<double>()),
                  fmt::format("{:.4f}", job.at("alone").at("iteration_time_s").get<double>()),
                  fmt::format("{:.4f}", shared.at("iteration_time_s").get<double>()),
                  fmt::format("{:.3f}x", job.at("slowdown").get<double>()),
                  std::to_string(shared.at("iterations").get<size_t>()),
                  fmt::format("{:.1f}", shared.at("tokens_per_s").get<double>()),
                  fmt::format("{:.1f}%", 100 * shared.at("mfu").get<double>()),
                  fmt::format(" {}", node_ranges(job.at("nodes").get<std::vector<int64_t>>()))});
  }
  out += jobs.render();
  const std::vector<int64_t> idle = report.at("idle_nodes").get<std::vector<int64_t>>();
  out += fmt::format("idle nodes: {} of {}{}\n", idle.size(), report.at("nodes").get<int64_t>(),
                     idle.empty() ? "" : " (" + node_ranges(idle) + ")");
  const std::string why = cluster_infeasibility(report);
  out += fmt::format("memory: {}\n", why.empty() ? "every job fits" : why);
  out += fmt::format(
      "shared s: the mean of the job's iterations (iters) that ran entirely while every job was running, "
      "after its first; every job had run {} iteration{} by {:.4f} s; tokens/s and MFU are the shared "
      "run's\n",
      iterations, iterations == 1 ? "" : "s", report.at("window_s").get<double>());
  out += report::render_what_if(report.at("provenance").at("inputs"));

  out +=
      fmt::format("\n# where the time went (critical rank, iteration {}; s, alone -> shared)\n", iterations);
  TextTable parts({{"job", Align::kLeft, 24}});
  for (const char* part : {"compute", "exposed comm", "bubble", "offload stall", "idle"}) {
    parts.add_column({part, Align::kRight, 19});
  }
  for (const json& job : report.at("jobs")) {
    std::vector<std::string> row = {job.at("name").get<std::string>()};
    for (const report::BreakdownPart& part : report::kBreakdownParts) {
      row.push_back(seconds(job.at("alone").at("breakdown").at(part.key).get<double>()) + " -> " +
                    seconds(job.at("shared").at("breakdown").at(part.key).get<double>()));
    }
    parts.add_row(std::move(row));
  }
  out += parts.render();

  bool any_slowed = false;
  for (const json& job : report.at("jobs")) any_slowed = any_slowed || !job.at("slowed_collectives").empty();
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
    for (const json& job : report.at("jobs")) {
      for (const json& c : job.at("slowed_collectives")) {
        slowed.add_row({job.at("name").get<std::string>(), c.at("kind").get<std::string>(),
                        c.at("group").get<std::string>(), std::to_string(c.at("group_size").get<int64_t>()),
                        fmt::format("{:.0f}", c.at("bytes_per_call").get<double>()),
                        std::to_string(c.at("calls").get<int64_t>()),
                        fmt::format("{:.1f}", 1e6 * c.at("alone_mean_time_s").get<double>()),
                        fmt::format("{:.1f}", 1e6 * c.at("shared_mean_time_s").get<double>()),
                        fmt::format("{:.1f} -> {:.1f}", c.at("alone_busbw_bytes_per_s").get<double>() / 1e9,
                                    c.at("shared_busbw_bytes_per_s").get<double>() / 1e9)});
      }
    }
    out += slowed.render();
  }
  if (report.contains("links")) {
    std::vector<std::string> names;
    for (const json& job : report.at("jobs")) names.push_back(job.at("name").get<std::string>());
    out += '\n';
    out += report::render_links(report.at("links"), names);
  }
  const json& warnings = report.at("warnings");
  if (!warnings.empty()) {
    out += "\n# warnings\n";
    for (const json& w : warnings) out += "- " + w.get<std::string>() + "\n";
  }
  return out;
}

}  // namespace trainsim::cluster
