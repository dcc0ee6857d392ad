// trainsim check FILE...: validates every kind of input file: scenarios, topologies, hardware and
// stack profiles, cluster files, validation cases and suites, sweep files and network parts.
#include <iostream>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "calibrate/scaling/network_part.h"
#include "sim/cluster/cluster_file.h"
#include "sim/sweep/sweep_file.h"
#include "sim/validate/accuracy.h"
#include "sim/validate/case.h"
#include "sim/validate/case_scenario.h"
#include "tools/trainsim/cli.h"

namespace trainsim::cli {
namespace {

struct CheckArgs {
  std::vector<std::filesystem::path> files;
  std::string kind;  // empty: detect
};

// What --kind accepts, and the kind each spelling forces.
const std::map<std::string, config::FileKind>& forced_kinds() {
  static const std::map<std::string, config::FileKind> kKinds = {
      {"scenario", config::FileKind::kScenario},   {"topology", config::FileKind::kTopology},
      {"hardware", config::FileKind::kHardware},   {"cluster", config::FileKind::kCluster},
      {"case", config::FileKind::kValidationCase}, {"suite", config::FileKind::kValidationSuite},
      {"sweep", config::FileKind::kSweep},         {"network", config::FileKind::kNetworkPart},
      {"accuracy", config::FileKind::kAccuracy}};
  return kKinds;
}

// The folder of validation cases a shared base serves, when `file` is one (a file in a folder named
// `base` whose parent holds a suite.yaml, or suites below it): such files may be partial, and mean
// what the cases extending them make of them.
std::optional<std::filesystem::path> validation_folder_of_base(const std::filesystem::path& file) {
  const std::filesystem::path absolute = std::filesystem::absolute(file).lexically_normal();
  if (absolute.parent_path().filename() != "base") return std::nullopt;
  const std::filesystem::path folder = absolute.parent_path().parent_path();
  for (const auto& entry : std::filesystem::recursive_directory_iterator(folder)) {
    if (entry.path().filename() == "suite.yaml") return folder;
  }
  return std::nullopt;
}

// A shared base, checked with every case of its suite folder and the scenario each builds.
std::string check_validation_base(const std::filesystem::path& file, const std::filesystem::path& folder) {
  const validate::ValidationSet set = validate::load_validation_set(folder);
  for (const validate::Case& c : set.cases) validate::load_case_scenario(c.scenario);
  return fmt::format("{}: ok: validation base, checked with the {} cases of {} and their scenarios",
                     file.string(), set.cases.size(), folder.filename().string());
}

// A validation case with the scenario it builds.
std::string check_validation_case(const std::filesystem::path& file) {
  const validate::ValidationSet set = validate::load_validation_set(file);
  const validate::Case& c = set.cases.at(0);
  const config::Scenario s = validate::load_case_scenario(c.scenario);
  return fmt::format("{}: ok: validation case {} (suite {}, {} {}; scenario {} on {} GPUs)", file.string(),
                     c.id, c.suite, validate::to_string(c.metric), c.published, s.name, s.cluster.gpus);
}

// A suite file, checked with the cases of its folder (its shape checks name them).
std::string check_validation_suite(const std::filesystem::path& file) {
  const std::filesystem::path folder = std::filesystem::absolute(file).lexically_normal().parent_path();
  const validate::ValidationSet set = validate::load_validation_set(folder);
  for (const validate::Suite& suite : set.suites) {
    if (std::filesystem::equivalent(suite.file, file)) {
      return fmt::format("{}: ok: validation suite {} ({} cases under {}, {} shape checks{})", file.string(),
                         suite.name, set.cases.size(), folder.filename().string(), suite.shape_checks.size(),
                         suite.gate ? ", gated" : "");
    }
  }
  return fmt::format("{}: ok: validation suite ({} cases under {})", file.string(), set.cases.size(),
                     folder.filename().string());
}

// Validates one file; returns a one-line summary or throws ConfigError.
std::string check_one(const std::filesystem::path& file, const std::string& forced_kind) {
  if (const std::optional<std::filesystem::path> folder = validation_folder_of_base(file);
      folder && forced_kind.empty()) {
    return check_validation_base(file, *folder);
  }
  const config::FileKind kind =
      forced_kind.empty() ? config::detect_file_kind(file) : forced_kinds().at(forced_kind);
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
      return fmt::format("{}: ok: hardware profile {} ({})", file.string(), h.name, h.gpu.name);
    }
    case config::FileKind::kCluster: {
      const cluster::ClusterFile c = cluster::load_cluster(file);
      std::string jobs;
      for (const cluster::ClusterJob& job : c.jobs) {
        jobs += fmt::format("{}{} on nodes {}", jobs.empty() ? "" : "; ", job.name,
                            cluster::node_ranges(job.nodes));
      }
      return fmt::format("{}: ok: cluster file {} ({} jobs on {}: {})", file.string(), c.name, c.jobs.size(),
                         c.topology.name, jobs);
    }
    case config::FileKind::kValidationCase:
      return check_validation_case(file);
    case config::FileKind::kValidationSuite:
      return check_validation_suite(file);
    case config::FileKind::kSweep: {
      const sweep::SweepFile sw = sweep::load_sweep(file);
      return fmt::format("{}: ok: sweep {} ({} axes over base {})", file.string(), sw.name,
                         sw.axis_list().size(), sw.base_text);
    }
    case config::FileKind::kNetworkPart: {
      const calibrate::NetworkPart part = calibrate::load_network_part(file);
      return fmt::format("{}: ok: network part {} ({:.0f} GB/s)", file.string(), part.name,
                         part.bandwidth_bytes_per_s / 1e9);
    }
    case config::FileKind::kAccuracy:
      return fmt::format("{}: ok: accuracy file ({} regimes)", file.string(),
                         validate::load_accuracy(file).size());
  }
  return "";
}

}  // namespace

void register_check(CLI::App& app, Context& context) {
  auto args = std::make_shared<CheckArgs>();
  CLI::App* cmd = app.add_subcommand(
      "check",
      "Validate any input file: scenario, topology, hardware or stack profile, cluster file, "
      "validation case or suite, sweep, network part");
  cmd->add_option("FILE", args->files, "Files to check (the kind is detected from the keys)")->required();
  cmd->add_option("--kind", args->kind, "Force the file kind")->check(CLI::IsMember(forced_kinds()));
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
