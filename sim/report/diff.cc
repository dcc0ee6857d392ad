#include "sim/report/diff.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>
#include <utility>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "sim/common/text_table.h"
#include "sim/config/emit.h"

namespace trainsim::report {
namespace {

using Json = nlohmann::json;
// Inputs as (dotted key, text) pairs, in their document's order.
using Inputs = std::vector<std::pair<std::string, std::string>>;

// Dotted keys and values of a YAML document, in its order (sequence items as key[i]).
void flatten_yaml(const YAML::Node& node, const std::string& key, Inputs& out) {
  if (node.IsMap()) {
    for (const auto& child : node) {
      const std::string name = child.first.as<std::string>();
      flatten_yaml(child.second, key.empty() ? name : key + "." + name, out);
    }
  } else if (node.IsSequence()) {
    for (size_t i = 0; i < node.size(); ++i) flatten_yaml(node[i], fmt::format("{}[{}]", key, i), out);
  } else {
    out.emplace_back(key, node.IsNull() ? "null" : node.Scalar());
  }
}

// The differing keys of two flattened documents: a's keys in a's order, then b's own keys.
std::vector<InputDifference> differences(const Inputs& a, const Inputs& b) {
  const std::map<std::string, std::string> in_a(a.begin(), a.end()), in_b(b.begin(), b.end());
  std::vector<InputDifference> out;
  for (const auto& [key, value] : a) {
    const auto other = in_b.find(key);
    const std::string b_value = other == in_b.end() ? "" : other->second;
    if (b_value != value) out.push_back({key, value, b_value});
  }
  for (const auto& [key, value] : b) {
    if (in_a.count(key) == 0) out.push_back({key, "", value});
  }
  return out;
}

Inputs scenario_keys(const config::Scenario& s, const std::string& shown_from) {
  Inputs keys;
  flatten_yaml(YAML::Load(config::to_yaml(s, config::Defaults::kWritten)), "", keys);
  const std::filesystem::path from = shown_from;
  for (auto& [key, value] : keys) {
    if (key == "cluster.topology") value = s.cluster.topology_path.lexically_relative(from).string();
    if (key == "cluster.hardware") value = s.cluster.hardware_path.lexically_relative(from).string();
  }
  return keys;
}

std::string text_of(const Json& value) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_boolean()) return value.get<bool>() ? "yes" : "no";
  return value.dump();
}

// A report's metrics, flattened: (key, value) in the order metric_changes documents.
using Metrics = std::vector<std::pair<std::string, Json>>;

void flatten_json(const Json& value, const std::string& key, Metrics& out) {
  if (value.is_object()) {
    for (const auto& [name, child] : value.items()) flatten_json(child, key + "." + name, out);
  } else if (value.is_array()) {
    for (size_t i = 0; i < value.size(); ++i) flatten_json(value[i], fmt::format("{}[{}]", key, i), out);
  } else {
    out.emplace_back(key, value);
  }
}

// What the report records of its inputs rather than of its outcome, and what is not a metric.
bool input_or_bookkeeping(const std::string& key) {
  static const std::set<std::string> kKeys = {
      "schema_version", "scenario",   "plan",     "dtype", "attention_kernel", "attention_pricing",
      "provenance",     "simulation", "warnings", "comm",  "stages",           "why",
      "accuracy"};
  return kKeys.count(key) > 0;
}

Metrics report_metrics(const Json& r) {
  Metrics headline, sections;
  for (const char* key : {"iteration_time_s", "tokens_per_s", "tflops_per_gpu", "mfu", "hfu",
                          "executed_flops_utilization", "compute_outside_layers_s"}) {
    if (r.contains(key)) headline.emplace_back(key, r.at(key));
  }
  const size_t ordered = headline.size();
  for (const auto& item : r.items()) {
    const std::string& key = item.key();
    const bool listed = std::any_of(headline.begin(), headline.begin() + static_cast<std::ptrdiff_t>(ordered),
                                    [&key](const auto& h) { return h.first == key; });
    if (listed || input_or_bookkeeping(key)) continue;
    if (item.value().is_object() || item.value().is_array()) {
      flatten_json(item.value(), key, sections);
    } else {
      headline.emplace_back(key, item.value());
    }
  }
  // Sections in reading order: the breakdown first, the closed form last.
  const auto rank = [](const std::string& key) {
    const std::string section = key.substr(0, key.find('.'));
    for (const auto& [i, name] : {std::pair{0, "breakdown"}, {1, "memory"}, {2, "power"}}) {
      if (section == name) return i;
    }
    return section == "analytic" ? 4 : 3;
  };
  std::stable_sort(sections.begin(), sections.end(),
                   [&](const auto& x, const auto& y) { return rank(x.first) < rank(y.first); });
  headline.insert(headline.end(), sections.begin(), sections.end());

  // The communication log summed per collective kind and group; the stages by their index.
  std::map<std::pair<std::string, std::string>, std::array<double, 3>> comm;
  std::vector<std::pair<std::string, std::string>> comm_order;
  for (const Json& entry : r.value("comm", Json::array())) {
    const std::pair<std::string, std::string> id{entry.value("kind", ""), entry.value("group", "")};
    if (comm.count(id) == 0) comm_order.push_back(id);
    std::array<double, 3>& sums = comm[id];
    sums[0] += entry.value("calls", 0.0);
    sums[1] += entry.value("total_bytes", 0.0);
    sums[2] += entry.value("time_s", 0.0);
  }
  for (const auto& id : comm_order) {
    const std::string prefix = fmt::format("comm.{}.{}.", id.first, id.second);
    headline.emplace_back(prefix + "calls", comm[id][0]);
    headline.emplace_back(prefix + "total_bytes", comm[id][1]);
    headline.emplace_back(prefix + "time_s", comm[id][2]);
  }
  for (const Json& stage : r.value("stages", Json::array())) {
    const std::string prefix = fmt::format("stages.{}.", stage.value("stage", 0));
    for (const auto& [name, value] : stage.items()) {
      if (name != "stage") headline.emplace_back(prefix + name, value);
    }
  }
  return headline;
}

bool moved(const Json& a, const Json& b, double relative_tolerance) {
  if (a.is_number() && b.is_number()) {
    const double x = a.get<double>(), y = b.get<double>();
    return std::abs(y - x) > relative_tolerance * std::max(std::abs(x), std::abs(y));
  }
  return a != b;
}

// The change of `key` from a to b, either absent (nullptr).
MetricChange change_of(const std::string& key, const Json* a, const Json* b) {
  MetricChange c;
  c.key = key;
  const auto fill = [](const Json* value, std::optional<double>& number, std::string& text) {
    if (value == nullptr) return;
    if (value->is_number()) number = value->get<double>();
    text = text_of(*value);
  };
  fill(a, c.a, c.a_text);
  fill(b, c.b, c.b_text);
  return c;
}

// Appends `value` flattened under `key` (flatten_json), each leaf as its text.
void append_flat(const Json& value, const std::string& key, Inputs& keys) {
  Metrics flat;
  flatten_json(value, key, flat);
  for (const auto& [leaf, text] : flat) keys.emplace_back(leaf, text_of(text));
}

// The input files (names and hashes) and options a report's provenance records, keys prefixed with
// `prefix`.
void append_provenance(const Json& r, const std::string& prefix, Inputs& keys) {
  if (!r.contains("provenance")) return;
  const Json& p = r.at("provenance");
  if (p.contains("inputs")) append_flat(p.at("inputs"), prefix + "inputs", keys);
  if (p.contains("options")) append_flat(p.at("options"), prefix + "options", keys);
}

// The inputs a run report records (scenario name, plan, dtype, attention kernel, the input files'
// names and hashes, the run's options), keys prefixed with `prefix`.
Inputs report_inputs(const Json& r, const std::string& prefix) {
  Inputs keys;
  for (const char* key : {"scenario", "dtype", "attention_kernel", "attention_pricing", "gpus"}) {
    if (r.contains(key)) keys.emplace_back(prefix + key, text_of(r.at(key)));
  }
  if (r.contains("plan")) append_flat(r.at("plan"), prefix + "plan", keys);
  append_provenance(r, prefix, keys);
  return keys;
}

// A cluster report's metrics: its window, then job by job (keys "jobs.NAME."): the slowdown, whether
// it fits, the shared run's spread over its iterations, each slowed collective (by kind, group and
// bytes per call), and the metrics of its run alone ("alone.") and shared ("shared.").
Metrics cluster_metrics(const Json& r) {
  Metrics out;
  if (r.contains("window_s")) out.emplace_back("window_s", r.at("window_s"));
  for (const Json& job : r.at("jobs")) {
    const std::string prefix = fmt::format("jobs.{}.", job.value("name", ""));
    for (const char* key : {"slowdown", "fits"}) {
      if (job.contains(key)) out.emplace_back(prefix + key, job.at(key));
    }
    const Json shared = job.value("shared", Json::object());
    for (const char* key : {"iterations", "min_iteration_s", "max_iteration_s"}) {
      if (shared.contains(key)) out.emplace_back(prefix + "shared." + key, shared.at(key));
    }
    for (const Json& slowed : job.value("slowed_collectives", Json::array())) {
      const std::string at = fmt::format("{}slowed.{}.{}.{:.0f}B.", prefix, slowed.value("kind", ""),
                                         slowed.value("group", ""), slowed.value("bytes_per_call", 0.0));
      for (const auto& [name, value] : slowed.items()) {
        if (name != "kind" && name != "group" && name != "bytes_per_call") out.emplace_back(at + name, value);
      }
    }
    for (const auto& [run, label] : {std::pair{"alone_report", "alone."}, {"shared_report", "shared."}}) {
      if (!job.contains(run)) continue;
      for (auto& [key, value] : report_metrics(job.at(run))) out.emplace_back(prefix + label + key, value);
    }
  }
  return out;
}

// What a validation report records of a case's inputs (the rest of the case is metrics, bookkeeping
// or prose).
bool case_input(const std::string& key) {
  static const std::set<std::string> kKeys = {"suite",     "file",      "metric",   "comparison", "unit",
                                              "tolerance", "network",   "role",     "profile",    "gpus",
                                              "stack",     "published", "calculon", "confidence", "scored"};
  return kKeys.count(key) > 0;
}

// A validation report's metrics: case by case (keys "cases.ID."), the simulated value, its error,
// whether it passes, the hardware-only run, the breakdown and every other figure of the case; then
// each suite's statistics ("summary.SUITE."), the error by GPU count ("by_gpus.RANGE."), the shape
// checks, the accuracy table's regimes ("accuracy.FRAMEWORK.GPU.RANGE.ROLE.") and the gate.
Metrics validation_metrics(const Json& r) {
  static const std::set<std::string> kBookkeeping = {"id",    "source", "assumptions",
                                                     "cpu_s", "wall_s", "calculon_relative_error"};
  Metrics out;
  for (const Json& c : r.at("cases")) {
    const std::string prefix = fmt::format("cases.{}.", c.value("id", ""));
    for (const auto& [name, value] : c.items()) {
      if (case_input(name) || kBookkeeping.count(name) > 0) continue;
      if (value.is_object() || value.is_array()) {
        flatten_json(value, prefix + name, out);
      } else {
        out.emplace_back(prefix + name, value);
      }
    }
  }
  if (r.contains("summary")) flatten_json(r.at("summary"), "summary", out);
  for (const Json& row : r.value("by_gpus", Json::array())) {
    const std::string prefix = fmt::format("by_gpus.{}.", row.value("gpus", ""));
    for (const auto& [name, value] : row.items()) {
      if (name != "gpus") out.emplace_back(prefix + name, value);
    }
  }
  for (const Json& check : r.value("shape_checks", Json::array())) {
    const std::string prefix =
        fmt::format("shape_checks.{}.{}.", check.value("suite", ""), check.value("name", ""));
    for (const char* side : {"simulated", "published"}) {
      if (check.contains(side)) out.emplace_back(prefix + side, check.at(side).value("pass", false));
    }
  }
  for (const Json& row : r.value("accuracy", Json::array())) {
    const std::string prefix =
        fmt::format("accuracy.{}.{}.{}.{}.", row.value("framework", ""), row.value("gpu", ""),
                    row.value("gpus", ""), row.value("role", ""));
    for (const char* key : {"cases", "median_abs_error", "max_abs_error", "simulated_faster"}) {
      if (row.contains(key)) out.emplace_back(prefix + key, row.at(key));
    }
  }
  if (r.contains("gate")) out.emplace_back("gate.pass", r.at("gate").value("pass", true));
  return out;
}

// Every key of `mb` that differs from `ma` by more than `relative_tolerance` of the larger magnitude,
// or that only one side has: a's keys in a's order, then b's own.
std::vector<MetricChange> changes(const Metrics& ma, const Metrics& mb, double relative_tolerance) {
  std::map<std::string, const Json*> in_b;
  for (const auto& [key, value] : mb) in_b[key] = &value;
  std::set<std::string> in_a;
  std::vector<MetricChange> out;
  for (const auto& [key, value] : ma) {
    in_a.insert(key);
    const auto other = in_b.find(key);
    if (other == in_b.end()) {
      out.push_back(change_of(key, &value, nullptr));
    } else if (moved(value, *other->second, relative_tolerance)) {
      out.push_back(change_of(key, &value, other->second));
    }
  }
  for (const auto& [key, value] : mb) {
    if (in_a.count(key) == 0) out.push_back(change_of(key, nullptr, &value));
  }
  return out;
}

// The warnings one report gives and the other does not, each as a change of `key`.
void warning_changes(const Json& a, const Json& b, const std::string& key, std::vector<MetricChange>& out) {
  const auto warnings = [](const Json& r) {
    std::vector<std::string> w;
    for (const Json& text : r.value("warnings", Json::array())) w.push_back(text_of(text));
    return w;
  };
  const std::vector<std::string> wa = warnings(a), wb = warnings(b);
  for (const std::string& w : wa) {
    if (std::find(wb.begin(), wb.end(), w) == wb.end()) out.push_back({key, {}, {}, w, ""});
  }
  for (const std::string& w : wb) {
    if (std::find(wa.begin(), wa.end(), w) == wa.end()) out.push_back({key, {}, {}, "", w});
  }
}

std::string format_value(const std::string& key, double value) {
  if (key.find("bytes_per_s") != std::string::npos) return fmt::format("{:.3f} GB/s", value / 1e9);
  if (key.find("bytes") != std::string::npos)
    return fmt::format("{:.3f} GiB", value / (1024.0 * 1024 * 1024));
  return fmt::format("{:.6g}", value);
}

}  // namespace

std::vector<InputDifference> scenario_differences(const config::Scenario& a, const config::Scenario& b,
                                                  const std::string& shown_from) {
  return differences(scenario_keys(a, shown_from), scenario_keys(b, shown_from));
}

std::vector<InputDifference> report_input_differences(const Json& a, const Json& b) {
  return differences(report_inputs(a, ""), report_inputs(b, ""));
}

std::vector<MetricChange> metric_changes(const Json& a, const Json& b, double relative_tolerance) {
  std::vector<MetricChange> out = changes(report_metrics(a), report_metrics(b), relative_tolerance);
  warning_changes(a, b, "warnings", out);
  return out;
}

bool is_validation_report(const Json& report) {
  return report.is_object() && report.contains("cases") && report.at("cases").is_array() &&
         report.contains("summary") && report.contains("gate");
}

std::vector<InputDifference> validation_input_differences(const Json& a, const Json& b) {
  const auto inputs = [](const Json& r) {
    Inputs keys;
    for (const Json& c : r.at("cases")) {
      const std::string prefix = fmt::format("cases.{}.", c.value("id", ""));
      for (const auto& [name, value] : c.items()) {
        if (case_input(name)) keys.emplace_back(prefix + name, text_of(value));
      }
    }
    if (r.contains("gate"))
      append_flat(r.at("gate").value("thresholds", Json::object()), "gate.thresholds", keys);
    return keys;
  };
  return differences(inputs(a), inputs(b));
}

std::vector<MetricChange> validation_metric_changes(const Json& a, const Json& b, double relative_tolerance) {
  return changes(validation_metrics(a), validation_metrics(b), relative_tolerance);
}

bool is_cluster_report(const Json& report) {
  return report.is_object() && report.contains("cluster") && report.contains("jobs") &&
         report.at("jobs").is_array();
}

std::vector<InputDifference> cluster_input_differences(const Json& a, const Json& b) {
  const auto inputs = [](const Json& r) {
    Inputs keys;
    for (const char* key : {"cluster", "topology", "nodes", "gpus_per_node", "placement", "idle_nodes"}) {
      if (r.contains(key)) keys.emplace_back(key, text_of(r.at(key)));
    }
    append_provenance(r, "", keys);
    for (const Json& job : r.at("jobs")) {
      const std::string prefix = fmt::format("jobs.{}.", job.value("name", ""));
      for (const char* key : {"scenario", "gpus", "nodes", "start_s"}) {
        if (job.contains(key)) keys.emplace_back(prefix + key, text_of(job.at(key)));
      }
      if (job.contains("alone_report")) {
        for (auto& key : report_inputs(job.at("alone_report"), prefix + "report."))
          keys.push_back(std::move(key));
      }
    }
    return keys;
  };
  return differences(inputs(a), inputs(b));
}

std::vector<MetricChange> cluster_metric_changes(const Json& a, const Json& b, double relative_tolerance) {
  std::vector<MetricChange> out = changes(cluster_metrics(a), cluster_metrics(b), relative_tolerance);
  warning_changes(a, b, "warnings", out);
  for (const Json& job : a.at("jobs")) {
    const std::string name = job.value("name", "");
    for (const Json& other : b.at("jobs")) {
      if (other.value("name", "") != name) continue;
      for (const auto& [run, label] : {std::pair{"alone_report", "alone"}, {"shared_report", "shared"}}) {
        if (job.contains(run) && other.contains(run)) {
          warning_changes(job.at(run), other.at(run), fmt::format("jobs.{}.{}.warnings", name, label), out);
        }
      }
    }
  }
  return out;
}

// A sweep point's key prefix: "points." and its axis values ("points.ep=8,capacity=1.25.").
std::string point_prefix(const Json& result) {
  std::string values;
  const Json axes = result.at("point").value("values", Json::object());
  for (const auto& [axis, value] : axes.items()) {
    values += fmt::format("{}{}={}", values.empty() ? "" : ",", axis, text_of(value));
  }
  return "points." + values + ".";
}

// A sweep point's result without what names the point and how it was evaluated (its inputs).
Json point_outcome(const Json& result) {
  Json outcome = result;
  outcome.erase("point");
  outcome.erase("mode");
  return outcome;
}

bool is_sweep_results(const Json& results) {
  return results.is_array() && std::all_of(results.begin(), results.end(), [](const Json& r) {
           return r.is_object() && r.contains("point") && r.contains("status");
         });
}

std::vector<InputDifference> sweep_input_differences(const Json& a, const Json& b) {
  const auto inputs = [](const Json& results) {
    Inputs keys;
    for (const Json& r : results) {
      const std::string prefix = point_prefix(r);
      keys.emplace_back(prefix + "mode", text_of(r.value("mode", Json(""))));
      for (auto& key : report_inputs(r, prefix)) keys.push_back(std::move(key));
    }
    return keys;
  };
  return differences(inputs(a), inputs(b));
}

std::vector<MetricChange> sweep_metric_changes(const Json& a, const Json& b, double relative_tolerance) {
  const auto metrics = [](const Json& results) {
    Metrics out;
    for (const Json& r : results) {
      const std::string prefix = point_prefix(r);
      for (auto& [key, value] : report_metrics(point_outcome(r))) out.emplace_back(prefix + key, value);
    }
    return out;
  };
  std::vector<MetricChange> out = changes(metrics(a), metrics(b), relative_tolerance);
  std::map<std::string, const Json*> in_b;
  for (const Json& r : b) in_b[point_prefix(r)] = &r;
  for (const Json& r : a) {
    const std::string prefix = point_prefix(r);
    if (const auto other = in_b.find(prefix); other != in_b.end()) {
      warning_changes(r, *other->second, prefix + "warnings", out);
    }
  }
  return out;
}

Json diff_json(const std::string& label_a, const std::string& label_b,
               const std::vector<InputDifference>& inputs, const std::vector<MetricChange>& metrics) {
  Json in = Json::array();
  for (const InputDifference& d : inputs) in.push_back({{"key", d.key}, {"a", d.a}, {"b", d.b}});
  Json out = Json::array();
  for (const MetricChange& m : metrics) {
    Json entry = {{"key", m.key}};
    if (m.a && m.b) {
      entry["a"] = *m.a;
      entry["b"] = *m.b;
      entry["change"] = *m.b - *m.a;
      entry["relative_change"] = *m.a != 0 ? Json((*m.b - *m.a) / std::abs(*m.a)) : Json(nullptr);
    } else {
      entry["a"] = m.a ? Json(*m.a) : m.a_text.empty() ? Json(nullptr) : Json(m.a_text);
      entry["b"] = m.b ? Json(*m.b) : m.b_text.empty() ? Json(nullptr) : Json(m.b_text);
    }
    out.push_back(entry);
  }
  return {{"a", label_a}, {"b", label_b}, {"inputs", in}, {"metrics", out}};
}

std::string render_diff_table(const Json& diff) {
  std::ostringstream out;
  out << fmt::format("# trainsim diff\n# A: {}\n# B: {}\n", diff.at("a").get<std::string>(),
                     diff.at("b").get<std::string>());
  const Json& inputs = diff.at("inputs");
  if (inputs.empty()) {
    out << "\n# inputs: identical\n";
  } else {
    out << fmt::format("\n# inputs that differ ({})\n", inputs.size());
    TextTable table({{"key", TextTable::Align::kLeft, 44},
                     {"A", TextTable::Align::kRight, 24},
                     {"B", TextTable::Align::kRight, 24}});
    const auto side = [](const Json& v) { return v.get<std::string>().empty() ? "-" : v.get<std::string>(); };
    for (const Json& d : inputs)
      table.add_row({d.at("key").get<std::string>(), side(d.at("a")), side(d.at("b"))});
    out << table.render();
  }
  const Json& metrics = diff.at("metrics");
  if (metrics.empty()) {
    out << "\n# metrics: none moved\n";
    return out.str();
  }
  out << fmt::format("\n# metrics that moved ({})\n", metrics.size());
  TextTable table({{"metric", TextTable::Align::kLeft, 44},
                   {"A", TextTable::Align::kRight, 16},
                   {"B", TextTable::Align::kRight, 16},
                   {"B - A", TextTable::Align::kRight, 16},
                   {"change", TextTable::Align::kRight, 9}});
  for (const Json& m : metrics) {
    const std::string key = m.at("key").get<std::string>();
    const auto cell = [&](const Json& v) {
      if (v.is_null()) return std::string("-");
      return v.is_number() ? format_value(key, v.get<double>()) : v.get<std::string>();
    };
    if (m.contains("change")) {
      const Json& relative = m.at("relative_change");
      table.add_row({key, cell(m.at("a")), cell(m.at("b")), cell(m.at("change")),
                     relative.is_null() ? "-" : fmt::format("{:+.2f}%", 100 * relative.get<double>())});
    } else {
      table.add_row({key, cell(m.at("a")), cell(m.at("b")), "", ""});
    }
  }
  out << table.render();
  return out.str();
}

}  // namespace trainsim::report
