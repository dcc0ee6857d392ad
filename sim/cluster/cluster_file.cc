#include "sim/cluster/cluster_file.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <set>

#include <fmt/format.h>

#include "sim/cluster/placement.h"
#include "sim/config/limits.h"
#include "sim/config/loader.h"
#include "sim/config/node.h"

namespace trainsim::cluster {
namespace {

using config::Location;
using config::MapReader;
using config::Node;

// A job entry as written, before its scenario is loaded. Keys not given are undefined nodes.
struct Entry {
  explicit Entry(const Node& entry)
      : scenario_key(entry), name_key(entry), gpus_key(entry), nodes_key(entry) {}

  std::filesystem::path scenario;
  Node scenario_key;
  std::string name;
  Node name_key;
  int64_t gpus = 0;  // 0: not given
  Node gpus_key;
  std::vector<int64_t> nodes;    // as listed
  std::vector<Node> node_where;  // where each of `nodes` was written
  Node nodes_key;
  double start_s = 0;
  std::vector<config::Setting> set;
};

// One element of `nodes`: a node number or a run "a-b" of the nodes of `topology`; only its spelling
// is checked (and nothing added to `out`) when the topology did not load.
bool decode_nodes_element(const Node& element, const config::Topology* topology, std::vector<int64_t>& out) {
  const std::string text = element.is_scalar() ? element.scalar() : "";
  const auto number = [](std::string_view s, int64_t& v) {
    const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    return !s.empty() && ec == std::errc() && ptr == s.data() + s.size() && v >= 0;
  };
  int64_t first = 0;
  int64_t last = 0;
  const size_t dash = text.find('-');
  bool ok = false;
  if (dash == std::string::npos) {
    ok = number(text, first);
    last = first;
  } else {
    ok = number(std::string_view(text).substr(0, dash), first) &&
         number(std::string_view(text).substr(dash + 1), last);
  }
  if (!ok) {
    element.error(fmt::format("expected a node number or a run of them such as 0-7, got \"{}\"", text));
    return false;
  }
  if (first > last) {
    element.error(fmt::format("the run {} goes backwards; write the lower node first", text));
    return false;
  }
  if (topology == nullptr) return true;  // the cluster file is refused for its topology anyway
  if (last >= topology->fabric.nodes) {
    element.error(fmt::format("node {} is not in the cluster: {} has nodes 0 to {}", last, topology->name,
                              topology->fabric.nodes - 1));
    return false;
  }
  for (int64_t n = first; n <= last; ++n) out.push_back(n);
  return true;
}

void decode_set(const Node& set, Entry& entry) {
  if (!set.is_map()) {
    set.error("expected a map of dotted scenario keys to values, e.g. set: {parallelism.pp: 4}");
    return;
  }
  for (auto it = set.layers().front().node.begin(); it != set.layers().front().node.end(); ++it) {
    const std::string key = it->first.Scalar();
    const Node value({{it->second, set.layers().front().source}}, set.child_path(key), set.diagnostics());
    if (key.rfind("cluster.", 0) == 0 || key == "cluster") {
      value.error(
          "a job runs on the cluster file's topology and hardware; give the job gpus: or nodes: "
          "instead of setting cluster keys");
    } else if (key.rfind("stragglers.slow_nics", 0) == 0) {
      value.error(
          "slow NICs belong to nodes of the cluster, not to one job; a cluster file does not take them");
    } else if (!value.is_scalar()) {
      value.error("expected a single value; set the keys of a map one by one (a.b: 1, a.c: 2)");
    } else {
      entry.set.push_back({key, value.scalar(), value.location()});
    }
  }
}

Entry decode_entry(const Node& node, const config::Topology* topology) {
  Entry e(node);
  MapReader r(node);
  e.scenario_key = r.child("scenario");
  if (!e.scenario_key.defined()) {
    r.missing("scenario");
  } else {
    config::decode(e.scenario_key, e.scenario);
  }
  e.name_key = r.child("name");
  if (e.name_key.defined()) config::decode(e.name_key, e.name);
  e.gpus_key = r.child("gpus");
  if (e.gpus_key.defined()) config::decode_count(e.gpus_key, e.gpus, {1, config::kMaxGpus});
  e.nodes_key = r.child("nodes");
  if (e.nodes_key.defined()) {
    if (!e.nodes_key.is_sequence() || e.nodes_key.elements().empty()) {
      e.nodes_key.error("expected a non-empty list of nodes, e.g. nodes: [0-7, 16]");
    } else {
      std::set<int64_t> seen;
      for (const Node& element : e.nodes_key.elements()) {
        std::vector<int64_t> some;
        if (!decode_nodes_element(element, topology, some)) continue;
        for (const int64_t n : some) {
          if (!seen.insert(n).second) {
            element.error(fmt::format("node {} is listed twice", n));
          } else {
            e.nodes.push_back(n);
            e.node_where.push_back(element);
          }
        }
      }
    }
  }
  r.read("start", e.start_s, config::QuantityKind::kDuration, config::RealRange{0, 1e9});
  const Node set = r.child("set");
  if (set.defined()) decode_set(set, e);
  r.finish();
  return e;
}

// The entry's GPUs: `gpus`, else its nodes' GPUs, else what the scenario asks for. Records an error
// and returns 0 when they are not whole nodes or disagree with the nodes.
int64_t job_gpus(const Entry& e, const config::Scenario& written, const config::Topology& topology) {
  const int64_t per_node = topology.node.gpus;
  const int64_t gpus = e.gpus > 0         ? e.gpus
                       : !e.nodes.empty() ? static_cast<int64_t>(e.nodes.size()) * per_node
                                          : written.cluster.gpus;
  const Node& where = e.gpus > 0 ? e.gpus_key : e.scenario_key;
  if (gpus % per_node != 0) {
    where.error(fmt::format(
        "a job takes whole nodes: {} GPUs{} is not a multiple of the {} GPUs of a node of {}; give "
        "gpus: as a multiple of {}",
        gpus, e.gpus > 0 ? "" : " (the scenario's cluster.gpus)", per_node, topology.name, per_node));
    return 0;
  }
  if (!e.nodes.empty() && static_cast<int64_t>(e.nodes.size()) * per_node != gpus) {
    e.nodes_key.error(fmt::format("{} nodes hold {} GPUs but the job has {}; list {} nodes", e.nodes.size(),
                                  static_cast<int64_t>(e.nodes.size()) * per_node, gpus, gpus / per_node));
    return 0;
  }
  return gpus;
}

// Whether the file `key` names can be read; records why not at the key.
bool readable(const Node& key, const std::filesystem::path& path, const char* what) {
  std::error_code ec;
  if (std::filesystem::is_regular_file(path, ec)) return true;
  key.error(fmt::format("cannot read the {} \"{}\" ({})", what, config::display_name(path),
                        std::filesystem::exists(path, ec) ? "not a regular file" : "no such file"));
  return false;
}

// The scenario of a job: as written, then on the cluster with its GPUs and settings.
bool load_job(const Entry& e, const ClusterFile& file, config::Diagnostics& diagnostics, ClusterJob& out) {
  const auto absorb = [&](const config::ConfigError& error) {
    for (const config::Diagnostic& d : error.diagnostics()) diagnostics.error(d.location, d.path, d.message);
  };
  if (!readable(e.scenario_key, e.scenario, "scenario")) return false;
  config::Scenario written;
  try {
    written = config::load_scenario(e.scenario);
  } catch (const config::ConfigError& error) {
    absorb(error);
    return false;
  }
  if (!written.stragglers.slow_nics.empty()) {
    e.scenario_key.error(
        "the scenario has stragglers.slow_nics, which belong to nodes of the cluster, not to one job; "
        "a cluster file does not take them");
    return false;
  }
  struct Part {
    const std::vector<config::WhatIf>* what_if;
    const char* key;   // cluster.<key>_set
    const char* file;  // as messages name it
  };
  for (const Part& part : {Part{&written.cluster.topology.what_if, "topology", "topology"},
                           Part{&written.cluster.hardware.what_if, "hardware", "hardware profile"}}) {
    if (part.what_if->empty()) continue;
    const config::WhatIf& first = part.what_if->front();
    e.scenario_key.error(fmt::format(
        "the scenario sets cluster.{}_set ({} at {}:{}:{}), but a job runs on the cluster file's {}; move "
        "the setting to the cluster file's {}_set, where it holds for every job",
        part.key, first.key, first.where.file, first.where.line, first.where.column, part.file, part.key));
    return false;
  }
  const int64_t gpus = job_gpus(e, written, file.topology);
  if (gpus == 0) return false;
  const Location at = (e.gpus > 0 ? e.gpus_key : e.scenario_key).location();
  std::vector<config::Setting> settings = {{"cluster.gpus", std::to_string(gpus), at},
                                           {"cluster.topology", file.topology.path.string(), at},
                                           {"cluster.hardware", file.hardware.path.string(), at}};
  for (const auto& [prefix, what_if] : {std::pair{"cluster.topology_set.", &file.topology.what_if},
                                        std::pair{"cluster.hardware_set.", &file.hardware.what_if}}) {
    for (const config::WhatIf& w : *what_if) settings.push_back({prefix + w.key, w.value, w.where});
  }
  settings.insert(settings.end(), e.set.begin(), e.set.end());
  try {
    out.scenario =
        config::load_scenario_with(e.scenario, settings, file.path.parent_path(), file.display_name);
  } catch (const config::ConfigError& error) {
    absorb(error);
    // A rule the job's GPUs break is reported at the scenario's own keys: say which job it is.
    const bool located_here =
        std::any_of(error.diagnostics().begin(), error.diagnostics().end(),
                    [&](const config::Diagnostic& d) { return d.location.file == file.display_name; });
    if (!located_here) {
      e.scenario_key.error(fmt::format("the scenario does not hold as this job ({} GPUs of {}): see {}", gpus,
                                       file.topology.name, config::display_name(written.path)));
    }
    return false;
  }
  out.scenario.path = written.path;
  out.scenario.content_hash = written.content_hash;
  out.name = e.name.empty() ? written.name : e.name;
  out.nodes = e.nodes;
  out.start_s = e.start_s;
  out.set = e.set;
  return true;
}

// Loads the cluster's topology or hardware profile named at `key`; false after recording why not.
template <class T, class Load>
bool load_part(const Node& key, const char* what, Load load, config::Diagnostics& diagnostics, T& out) {
  std::filesystem::path path;
  if (!key.defined() || !config::decode(key, path) || !readable(key, path, what)) return false;
  try {
    out = load(path);
    return true;
  } catch (const config::ConfigError& error) {
    for (const config::Diagnostic& d : error.diagnostics()) diagnostics.error(d.location, d.path, d.message);
    return false;
  }
}

// Checks that no node is listed by two jobs; `labels` name the entries.
void check_nodes_held_once(const std::vector<Entry>& entries, const std::vector<std::string>& labels) {
  std::map<int64_t, size_t> holder;
  for (size_t j = 0; j < entries.size(); ++j) {
    for (size_t k = 0; k < entries[j].nodes.size(); ++k) {
      const int64_t n = entries[j].nodes[k];
      const Node& where = entries[j].node_where[k];
      if (const auto [it, inserted] = holder.emplace(n, j); !inserted) {
        where.error(
            fmt::format("node {} is also held by job {}; a node runs one job", n, labels[it->second]));
        break;
      }
    }
  }
}

// Places the jobs without nodes on the nodes no job lists.
void place_jobs(const Node& jobs_key, ClusterFile& file) {
  const int64_t cluster_nodes = file.topology.fabric.nodes;
  std::set<int64_t> held;
  std::vector<int64_t> needed;
  int64_t total = 0;
  for (const ClusterJob& job : file.jobs) {
    held.insert(job.nodes.begin(), job.nodes.end());
    needed.push_back(job.nodes.empty() ? job.scenario.cluster.gpus / file.topology.node.gpus : 0);
    total += needed.back();
  }
  std::vector<int64_t> free_nodes;
  for (int64_t n = 0; n < cluster_nodes; ++n) {
    if (!held.contains(n)) free_nodes.push_back(n);
  }
  if (total > static_cast<int64_t>(free_nodes.size())) {
    jobs_key.error(
        fmt::format("the jobs without a nodes: list need {} nodes but {} of the cluster's {} are free", total,
                    free_nodes.size(), cluster_nodes));
    return;
  }
  const std::vector<std::vector<int64_t>> placed = place(file.placement, file.seed, free_nodes, needed);
  for (size_t j = 0; j < file.jobs.size(); ++j) {
    if (file.jobs[j].nodes.empty()) file.jobs[j].nodes = placed[j];
  }
}

}  // namespace

std::vector<int64_t> ClusterFile::gpu_of_rank(size_t job) const {
  const int64_t per_node = topology.node.gpus;
  std::vector<int64_t> out;
  for (const int64_t node : jobs[job].nodes) {
    for (int64_t g = 0; g < per_node; ++g) out.push_back(node * per_node + g);
  }
  return out;
}

std::vector<int64_t> ClusterFile::idle_nodes() const {
  std::set<int64_t> held;
  for (const ClusterJob& job : jobs) held.insert(job.nodes.begin(), job.nodes.end());
  std::vector<int64_t> out;
  for (int64_t n = 0; n < topology.fabric.nodes; ++n) {
    if (!held.contains(n)) out.push_back(n);
  }
  return out;
}

std::string node_ranges(std::vector<int64_t> nodes) {
  std::sort(nodes.begin(), nodes.end());
  std::string out;
  for (size_t i = 0; i < nodes.size();) {
    size_t j = i;
    while (j + 1 < nodes.size() && nodes[j + 1] == nodes[j] + 1) ++j;
    if (!out.empty()) out += ", ";
    out += j == i ? std::to_string(nodes[i]) : fmt::format("{}-{}", nodes[i], nodes[j]);
    i = j + 1;
  }
  return out;
}

ClusterFile load_cluster(const std::filesystem::path& path, const std::vector<config::Override>& overrides) {
  ClusterFile out;
  out.path = std::filesystem::absolute(path).lexically_normal();
  out.display_name = config::display_name(out.path);
  config::Diagnostics diagnostics;
  const std::optional<Node> root =
      config::load_input_file(out.path, overrides, diagnostics, &out.content_hash);
  if (!root) diagnostics.throw_if_any();
  MapReader r(*root);
  r.child("schema_version");  // checked by the loader
  r.child("extends");         // followed by the loader
  out.name = out.path.stem().string();
  r.read("name", out.name);
  r.read("description", out.description);
  const Node topology = r.child("topology");
  const Node hardware = r.child("hardware");
  if (!topology.defined()) r.missing("topology");
  if (!hardware.defined()) r.missing("hardware");
  const Node topology_set = r.child("topology_set");  // what-ifs over the files, for every job
  const Node hardware_set = r.child("hardware_set");
  const bool have_topology = load_part(
      topology, "topology", [&](const auto& p) { return config::load_topology(p, topology_set); },
      diagnostics, out.topology);
  const bool have_hardware = load_part(
      hardware, "hardware profile", [&](const auto& p) { return config::load_hardware(p, hardware_set); },
      diagnostics, out.hardware);
  r.read("placement", out.placement);
  auto seed = static_cast<int64_t>(out.seed);
  if (r.read("seed", seed, config::kNonNegative)) out.seed = static_cast<uint64_t>(seed);
  const Node jobs = r.child("jobs");
  std::vector<Entry> entries;
  std::vector<bool> decoded;  // per entry: without problems of its own
  if (!jobs.defined()) {
    r.missing("jobs");
  } else if (!jobs.is_sequence() || jobs.elements().empty()) {
    jobs.error("expected a list of jobs, e.g. jobs: [{scenario: a.yaml}, {scenario: b.yaml}]");
  } else {
    for (const Node& element : jobs.elements()) {
      const size_t before = diagnostics.count();
      entries.push_back(decode_entry(element, have_topology ? &out.topology : nullptr));
      decoded.push_back(diagnostics.count() == before);
    }
  }
  r.finish();
  if (!have_topology || !have_hardware) diagnostics.throw_if_any();
  if (out.topology.fabric.nodes < 1) {
    topology.error("the topology has no nodes");
    diagnostics.throw_if_any();
  }

  std::vector<std::string> labels;
  std::map<std::string, size_t> by_name;
  for (size_t i = 0; i < entries.size(); ++i) {
    const Entry& e = entries[i];
    ClusterJob job;
    const bool loaded = decoded[i] && load_job(e, out, diagnostics, job);
    labels.push_back(loaded ? job.name : !e.name.empty() ? e.name : fmt::format("jobs[{}]", i));
    if (loaded && !by_name.emplace(job.name, i).second) {
      (e.name_key.defined() ? e.name_key : e.scenario_key)
          .error(fmt::format("two jobs are named {}; give one a name: of its own", job.name));
    }
    if (loaded) out.jobs.push_back(std::move(job));
  }
  check_nodes_held_once(entries, labels);
  if (diagnostics.empty()) place_jobs(jobs, out);
  diagnostics.throw_if_any();
  return out;
}

}  // namespace trainsim::cluster
