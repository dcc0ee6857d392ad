// trainsim check FILE...: validates scenario, topology, hardware-profile and cluster files.
#include <iostream>
#include <map>

#include <fmt/format.h>

#include "sim/cluster/cluster_file.h"
#include "tools/trainsim/cli.h"

namespace trainsim::cli {
namespace {

struct CheckArgs {
  std::vector<std::filesystem::path> files;
  std::string kind;  // empty: detect
};

std::string_view kind_name(config::FileKind kind) {
  switch (kind) {
    case config::FileKind::kScenario:
      return "scenario";
    case config::FileKind::kTopology:
      return "topology";
    case config::FileKind::kHardware:
      return "hardware profile";
    case config::FileKind::kCluster:
      return "cluster file";
  }
  return "?";
}

// Validates one file; returns a one-line summary or throws ConfigError.
std::string check_one(const std::filesystem::path& file, const std::string& forced_kind) {
  static const std::map<std::string, config::FileKind> kKinds = {{"scenario", config::FileKind::kScenario},
                                                                 {"topology", config::FileKind::kTopology},
                                                                 {"hardware", config::FileKind::kHardware},
                                                                 {"cluster", config::FileKind::kCluster}};
  const config::FileKind kind = forced_kind.empty() ? config::detect_file_kind(file) : kKinds.at(forced_kind);
  switch (kind) {
    case config::FileKind::kScenario: {
      const config::Scenario s = config::load_scenario(file);
      return fmt::format("{}: ok: scenario {} ({} GPUs, tp {} pp {} dp {} sp {})", file.string(), s.name,
                         s.cluster.gpus, s.parallelism.tp, s.parallelism.pp, s.parallelism.dp,
                         s.parallelism.sp);
    }
    case config::FileKind::kTopology: {
      const config::Topology t = config::load_topology(file);
      return fmt::format("{}: ok: topology {} ({} nodes x {} GPUs)", file.string(), t.name, t.fabric.nodes,
                         t.node.gpus);
    }
    case config::FileKind::kHardware: {
      const config::HardwareProfile h = config::load_hardware(file);
      if (h.stack) {
        return fmt::format("{}: ok: stack profile {} ({}) on hardware profile {} ({})", file.string(), h.name,
                           h.stack->framework, h.stack->hardware_name, h.gpu.name);
      }
      return fmt::format("{}: ok: {} {} ({})", file.string(), kind_name(kind), h.name, h.gpu.name);
    }
    case config::FileKind::kCluster: {
      const cluster::ClusterFile c = cluster::load_cluster(file);
      std::string jobs;
      for (const cluster::ClusterJob& job : c.jobs) {
        jobs += fmt::format("{}{} on nodes {}", jobs.empty() ? "" : "; ", job.name,
                            cluster::node_ranges(job.nodes));
      }
      return fmt::format("{}: ok: {} {} ({} jobs on {}: {})", file.string(), kind_name(kind), c.name,
                         c.jobs.size(), c.topology.name, jobs);
    }
  }
  return "";
}

}  // namespace

void register_check(CLI::App& app, Context& context) {
  auto args = std::make_shared<CheckArgs>();
  CLI::App* cmd =
      app.add_subcommand("check", "Validate scenario, topology, hardware-profile and cluster files");
  cmd->add_option("FILE", args->files, "Files to check (the kind is detected from the keys)")->required();
  cmd->add_option("--kind", args->kind, "Force the file kind")
      ->check(CLI::IsMember({"scenario", "topology", "hardware", "cluster"}));
  cmd->footer(
      "Prints every error at once as file:line:col: error: key: message; exits 3 if any file is invalid.");
  cmd->callback([args, &context] {
    bool all_ok = true;
    for (const std::filesystem::path& file : args->files) {
      try {
        std::cout << check_one(file, args->kind) << '\n';
      } catch (const config::ConfigError& e) {
        std::cerr << e.what() << '\n';
        all_ok = false;
      }
    }
    context.exit_code = all_ok ? kExitOk : kExitInvalidInput;
  });
}

}  // namespace trainsim::cli
