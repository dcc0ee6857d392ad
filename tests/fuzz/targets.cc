#include "tests/fuzz/targets.h"

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>
#include <stdexcept>
#include <unistd.h>

#include <fmt/format.h>

#include "calibrate/nccl_tests/import.h"
#include "calibrate/nccl_tests/parsers.h"
#include "calibrate/profile/writer.h"
#include "sim/cluster/cluster_file.h"
#include "sim/config/emit.h"
#include "sim/config/limits.h"
#include "sim/config/loader.h"
#include "sim/config/units.h"
#include "sim/measured/kineto_trace.h"
#include "sim/platform/analysis.h"
#include "sim/platform/topology_graph.h"
#include "sim/sweep/expand.h"
#include "sim/sweep/sweep_file.h"

namespace trainsim::fuzz {
namespace {

namespace fs = std::filesystem;

// Where a fuzzed input stands: beside the shipped inputs of its kind, so relative references
// (../topologies/x.yaml, extends: base.yaml) reach real files.
fs::path beside(const char* folder, const char* name) {
  return fs::path(TRAINSIM_SOURCE_DIR) / folder / name;
}

// Topologies up to this size are also built into a graph (generators, routing, connectivity).
constexpr int64_t kGraphGpus = 1024;

// A scenario loads or fails with located errors; one that loads prints (`trainsim show`) as YAML
// that loads back to the same YAML.
void scenario_target(std::string_view input) {
  const fs::path path = beside("scenarios", "fuzz-input.yaml");
  config::Scenario scenario;
  try {
    scenario = config::load_scenario_text(std::string(input), path);
  } catch (const config::ConfigError&) {
    return;
  }
  const std::string shown = config::to_yaml(scenario);
  config::Scenario reloaded;
  try {
    reloaded = config::load_scenario_text(shown, path);
  } catch (const config::ConfigError& e) {
    finding(fmt::format("the shown scenario does not load back:\n{}\n--- shown:\n{}", e.what(), shown));
  }
  if (config::to_yaml(reloaded) != shown) {
    finding(fmt::format("the shown scenario loads back to another one:\n{}\n--- then:\n{}", shown,
                        config::to_yaml(reloaded)));
  }
}

// A topology loads or fails with located errors; a small one that loads builds into a connected
// graph whose summary (`trainsim topo`) can be computed.
void topology_target(std::string_view input) {
  config::Topology topology;
  try {
    topology = config::load_topology_text(std::string(input), beside("topologies", "fuzz-input.yaml"));
  } catch (const config::ConfigError&) {
    return;
  }
  if (topology.total_gpus() > kGraphGpus) return;
  try {
    const platform::TopologyGraph graph(topology);
    platform::summarize(graph);
  } catch (const config::ConfigError&) {  // fabric parameters that cannot be realised (documented)
  }
}

void hardware_target(std::string_view input) {
  try {
    config::load_hardware_text(std::string(input), beside("calibrate/profiles", "fuzz-input.yaml"));
  } catch (const config::ConfigError&) {
  }
}

// Every quantity kind, the count syntax and token totals. What parses formats back to a spelling that parses
// to the same value.
void units_target(std::string_view input) {
  using config::QuantityKind;
  for (const QuantityKind kind : {QuantityKind::kBytes, QuantityKind::kBandwidth, QuantityKind::kDuration,
                                  QuantityKind::kFlopRate, QuantityKind::kFrequency, QuantityKind::kPower}) {
    std::string error;
    const std::optional<double> value = config::parse_quantity(input, kind, &error);
    if (!value) {
      if (error.empty()) finding(fmt::format("parse_quantity refused \"{}\" without a message", input));
      continue;
    }
    if (!std::isfinite(*value) || *value < 0) {
      finding(fmt::format("parse_quantity(\"{}\") = {}: not a finite, non-negative quantity", input, *value));
    }
    const std::string spelt = config::format_quantity(*value, kind);
    const std::optional<double> again = config::parse_quantity(spelt, kind, &error);
    if (!again || std::abs(*again - *value) > 1e-9 * *value) {
      finding(fmt::format("\"{}\" = {} formats as \"{}\", which parses to {}", input, *value, spelt,
                          again ? fmt::format("{}", *again) : error));
    }
  }
  std::string error;
  const std::optional<int64_t> count = config::parse_count(input, &error);
  if (count) {
    const std::string spelt = config::format_count(*count);
    const std::optional<int64_t> again = config::parse_count(spelt, &error);
    if (!again || *again != *count) {
      finding(fmt::format("count \"{}\" = {} formats as \"{}\", which does not parse back", input, *count,
                          spelt));
    }
  } else if (error.empty()) {
    finding(fmt::format("parse_count refused \"{}\" without a message", input));
  }
  error.clear();
  const std::optional<double> tokens = config::parse_token_total(input, &error);
  if (tokens) {
    const std::string spelt = config::format_token_total(*tokens);
    const std::optional<double> again = config::parse_token_total(spelt, &error);
    if (!again || *again != *tokens) {
      finding(fmt::format("token total \"{}\" = {} formats as \"{}\", which does not parse back", input,
                          *tokens, spelt));
    }
  } else if (error.empty()) {
    finding(fmt::format("parse_token_total refused \"{}\" without a message", input));
  }
}

// A log reads (text or JSON, as read_nccl_tests decides) or fails with a located error; one that
// reads imports into a profile that loads back.
void nccl_tests_target(std::string_view input) {
  static const config::HardwareProfile base =
      config::load_hardware(beside("calibrate/profiles", "h100-sxm5-80gb.yaml"));
  calibrate::NcclTestsLog log;
  try {
    const size_t first = input.find_first_not_of(" \t\r\n");
    log = first != std::string_view::npos && input[first] == '{'
              ? calibrate::parse_nccl_tests_json(input, "all_reduce_perf.fuzz.json")
              : calibrate::parse_nccl_tests_text(input, "all_reduce_perf.fuzz.log");
  } catch (const config::ConfigError&) {
    return;
  }
  calibrate::describe(log);
  calibrate::ImportOptions options;
  options.base_label = "h100-sxm5-80gb.yaml";
  const calibrate::ProfileDocument doc = calibrate::import_nccl_tests(base, {log}, options);
  const std::string text = calibrate::profile_file_text(doc);
  try {
    config::load_hardware_text(text, beside("calibrate/profiles", "fuzz-imported.yaml"));
  } catch (const config::ConfigError& e) {
    finding(fmt::format("the imported profile does not load:\n{}\n--- profile:\n{}", e.what(), text));
  }
}

// Where a fuzzed sweep or cluster file is written: they are read from disk and name their scenarios
// relative to themselves, so this is a scratch copy of the source tree's layout (links to each
// scenarios/*.yaml, to topologies/ and calibrate/), removed at exit: <scratch>/scenarios/<folder>/.
fs::path input_path_in(const std::string& folder) {
  const fs::path root = fs::temp_directory_path() / fmt::format("trainsim-fuzz-{}-{}", folder, ::getpid());
  const fs::path source(TRAINSIM_SOURCE_DIR);
  fs::create_directories(root / "scenarios" / folder);
  for (const fs::directory_entry& e : fs::directory_iterator(source / "scenarios")) {
    if (e.is_regular_file()) fs::create_symlink(e.path(), root / "scenarios" / e.path().filename());
  }
  fs::create_directory_symlink(source / "topologies", root / "topologies");
  fs::create_directory_symlink(source / "calibrate", root / "calibrate");
  static std::vector<fs::path> roots;
  if (roots.empty()) {
    std::atexit([] {
      std::error_code ec;
      for (const fs::path& r : roots) fs::remove_all(r, ec);
    });
  }
  roots.push_back(root);
  return root / "scenarios" / folder / "fuzz-input.yaml";
}

void write_input(const fs::path& path, std::string_view input) {
  std::ofstream(path, std::ios::binary | std::ios::trunc)
      .write(input.data(), static_cast<std::streamsize>(input.size()));
}

// A sweep file expands into its points or fails with located errors.
void sweep_target(std::string_view input) {
  static const fs::path path = input_path_in("sweeps");
  write_input(path, input);
  try {
    sweep::expand(sweep::load_sweep(path));
  } catch (const config::ConfigError&) {
  }
}

// A cluster file loads with every job on distinct whole nodes of the cluster, or fails with located
// errors.
void cluster_target(std::string_view input) {
  static const fs::path path = input_path_in("cluster");
  write_input(path, input);
  cluster::ClusterFile file;
  try {
    file = cluster::load_cluster(path);
  } catch (const config::ConfigError&) {
    return;
  }
  std::set<int64_t> held;
  for (size_t j = 0; j < file.jobs.size(); ++j) {
    const cluster::ClusterJob& job = file.jobs[j];
    if (static_cast<int64_t>(file.gpu_of_rank(j).size()) != job.scenario.cluster.gpus) {
      finding(fmt::format("job {} has {} GPUs on {} nodes", job.name, job.scenario.cluster.gpus,
                          job.nodes.size()));
    }
    for (const int64_t n : job.nodes) {
      if (n < 0 || n >= file.topology.fabric.nodes || !held.insert(n).second) {
        finding(fmt::format("job {} holds node {}, outside the cluster or held twice", job.name, n));
      }
    }
  }
}

// A PyTorch profiler trace reads into steps whose breakdown fills each step exactly, every number
// finite and none negative, or fails with a located error.
void kineto_target(std::string_view input) {
  std::istringstream in{std::string(input)};
  measured::MeasuredTrace t;
  try {
    t = measured::read_kineto_trace(in, "trace.fuzz.json");
  } catch (const config::ConfigError&) {
    return;
  }
  if (t.steps.empty()) finding("a trace read without steps");
  for (const measured::StepProfile& s : t.steps) {
    const double parts = s.compute_s + s.exposed_comm_s + s.exposed_copy_s + s.idle_s;
    for (const double v : {s.step_s, s.compute_s, s.exposed_comm_s, s.exposed_copy_s, s.idle_s}) {
      if (!std::isfinite(v) || v < 0) finding(fmt::format("a step's breakdown holds {}", v));
    }
    if (std::abs(parts - s.step_s) > 1e-9 * std::max(1.0, s.step_s)) {
      finding(fmt::format("a step of {} s splits into {} s", s.step_s, parts));
    }
  }
  for (size_t k = 1; k < t.kernels.size(); ++k) {
    if (t.kernels[k].time_s > t.kernels[k - 1].time_s) finding("the kernel totals are not longest first");
  }
}

}  // namespace

const std::vector<FuzzTarget>& fuzz_targets() {
  static const std::vector<FuzzTarget> kTargets = {
      {"scenario", scenario_target}, {"topology", topology_target},     {"hardware", hardware_target},
      {"units", units_target},       {"nccl_tests", nccl_tests_target}, {"sweep", sweep_target},
      {"cluster", cluster_target},   {"kineto", kineto_target},
  };
  return kTargets;
}

const FuzzTarget* find_fuzz_target(std::string_view name) {
  for (const FuzzTarget& t : fuzz_targets()) {
    if (name == t.name) return &t;
  }
  return nullptr;
}

void finding(const std::string& what) {
  std::cerr << "fuzz finding: " << what << std::endl;
  std::abort();
}

}  // namespace trainsim::fuzz
