// trainsim topo FILE: what a topology amounts to (sizes, injection and bisection bandwidth,
// diameter) and, with --path, the route between two GPUs hop by hop.
#include <iostream>
#include <iterator>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "sim/platform/analysis.h"
#include "tools/trainsim/cli.h"

namespace trainsim::cli {
namespace {

struct TopoArgs {
  std::filesystem::path file;
  std::vector<std::string> overrides;
  std::vector<std::string> path;
  std::string format = "table";
};

std::string gb_per_s(double bytes_per_s) { return fmt::format("{:.2f} GB/s", bytes_per_s / 1e9); }
std::string microseconds(double s) { return fmt::format("{:.3f} us", s * 1e6); }

std::string render_table(const config::Topology& topology, const platform::TopologySummary& s,
                         const std::optional<platform::PathReport>& path) {
  std::string out;
  const auto row = [&out](std::string_view key, const std::string& value) {
    fmt::format_to(std::back_inserter(out), "{:<22}{}\n", key, value);
  };
  row("topology", topology.name);
  if (!topology.description.empty()) row("description", topology.description);
  row("fabric", s.fabric);
  row("GPUs", fmt::format("{}", s.gpus));
  row("nodes", fmt::format("{} x {} GPUs", s.nodes, s.gpus_per_node));
  row("links", fmt::format("{} ({} cables, {} vertices)", s.links, s.cables, s.vertices));
  row("injection per GPU",
      fmt::format("{} intra-node, {} inter-node", gb_per_s(s.intra_node_injection_bytes_per_s),
                  gb_per_s(s.inter_node_injection_bytes_per_s)));
  row("bisection", fmt::format("{} NVLink domain, {} fabric", gb_per_s(s.nvlink_bisection_bytes_per_s),
                               gb_per_s(s.fabric_bisection_bytes_per_s)));
  row("diameter", fmt::format("{} hops (GPU to GPU)", s.diameter_hops));
  if (!path) return out;
  fmt::format_to(std::back_inserter(out), "\npath {} -> {}: {} hops, {}, bottleneck {}\n", path->from,
                 path->to, path->hops.size(), microseconds(path->latency_s),
                 gb_per_s(path->bottleneck_bytes_per_s));
  fmt::format_to(std::back_inserter(out), "{:>5}  {:<24}  {:<24}  {:<12}  {:>14}  {:>10}\n", "hop", "from",
                 "to", "link", "bandwidth", "latency");
  for (size_t i = 0; i < path->hops.size(); ++i) {
    const platform::PathHop& h = path->hops[i];
    const std::string cables = h.cables > 1   ? fmt::format(" ({} cables)", h.cables)
                               : h.cable >= 0 ? fmt::format(" (cable {})", h.cable)
                                              : "";
    fmt::format_to(std::back_inserter(out), "{:>5}  {:<24}  {:<24}  {:<12}  {:>14}  {:>10}{}\n", i + 1,
                   h.from, h.to, platform::to_string(h.kind), gb_per_s(h.bandwidth_bytes_per_s),
                   microseconds(h.latency_s), cables);
  }
  return out;
}

nlohmann::ordered_json to_json(const config::Topology& topology, const platform::TopologySummary& s,
                               const std::optional<platform::PathReport>& path) {
  nlohmann::ordered_json j;
  j["schema_version"] = 1;
  j["topology"] = topology.name;
  j["description"] = topology.description;
  j["fabric"] = s.fabric;
  j["gpus"] = s.gpus;
  j["nodes"] = s.nodes;
  j["gpus_per_node"] = s.gpus_per_node;
  j["links"] = s.links;
  j["cables"] = s.cables;
  j["vertices"] = s.vertices;
  j["injection_bandwidth_bytes_per_s"] = {{"intra_node", s.intra_node_injection_bytes_per_s},
                                          {"inter_node", s.inter_node_injection_bytes_per_s}};
  j["bisection_bandwidth_bytes_per_s"] = {{"nvlink_domain", s.nvlink_bisection_bytes_per_s},
                                          {"fabric", s.fabric_bisection_bytes_per_s}};
  j["diameter_hops"] = s.diameter_hops;
  if (path) {
    nlohmann::ordered_json hops = nlohmann::ordered_json::array();
    for (const platform::PathHop& h : path->hops) {
      hops.push_back({{"from", h.from},
                      {"to", h.to},
                      {"link", platform::to_string(h.kind)},
                      {"bandwidth_bytes_per_s", h.bandwidth_bytes_per_s},
                      {"latency_s", h.latency_s},
                      {"cables", h.cables}});
      if (h.cable >= 0) hops.back()["cable"] = h.cable;
    }
    j["path"] = {{"from", path->from},
                 {"to", path->to},
                 {"latency_s", path->latency_s},
                 {"bottleneck_bandwidth_bytes_per_s", path->bottleneck_bytes_per_s},
                 {"hops", hops}};
  }
  return j;
}

}  // namespace

void register_topo(CLI::App& app, Context& context) {
  auto args = std::make_shared<TopoArgs>();
  CLI::App* cmd = app.add_subcommand("topo", "Summarise a topology: sizes, bandwidths, diameter, routes");
  cmd->add_option("FILE", args->file, "Topology YAML file")->required();
  cmd->add_option("--set", args->overrides, "Override a topology key: --set fabric.nodes=64 (repeatable)")
      ->type_name("KEY=VALUE");
  cmd->add_option("--path", args->path, "Print the route between two GPUs, e.g. --path node0/gpu0 node3/gpu5")
      ->expected(2)
      ->type_name("GPU_A GPU_B");
  add_format_option(cmd, args->format, false);
  cmd->footer(
      "Bandwidths are per direction. Bisection: smallest cut between two halves of the NVLink domain and of "
      "the "
      "nodes.\nDiameter: most links crossed between two GPUs. GPU names: node<n>/gpu<i>.");
  cmd->callback([args, &context] {
    std::vector<config::Override> overrides;
    for (const std::string& text : args->overrides) overrides.push_back(config::parse_override(text));
    const config::Topology topology = config::load_topology(args->file, overrides);
    const platform::TopologyGraph graph(topology);
    std::optional<platform::PathReport> path;
    try {
      if (!args->path.empty()) {
        path = platform::describe_path(graph, graph.gpu_by_name(args->path[0]),
                                       graph.gpu_by_name(args->path[1]));
      }
    } catch (const platform::UnknownGpuError& e) {
      std::cerr << "error: --path: " << e.what() << '\n';
      context.exit_code = kExitUsage;
      return;
    }
    const platform::TopologySummary summary = platform::summarize(graph);
    print_result(args->format, {[&] { return json_text(to_json(topology, summary, path)); },
                                [&] { return render_table(topology, summary, path); }});
    context.exit_code = kExitOk;
  });
}

}  // namespace trainsim::cli
