#include "sim/validate/accuracy.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <yaml-cpp/yaml.h>

#include "sim/config/diagnostics.h"
#include "sim/config/loader.h"
#include "sim/config/node.h"
#include "sim/validate/metrics.h"
#include "sim/validate/statistics.h"
#include "trainsim_accuracy_table.h"  // generated: the shipped accuracy file

namespace trainsim::validate {
namespace {

// The scale ranges: the most GPUs of each (0: no bound) and its name.
constexpr std::array<std::pair<int64_t, const char*>, 4> kRanges = {
    {{8, "1-8"}, {64, "9-64"}, {512, "65-512"}, {0, "513+"}}};

// The position of a scale range in kRanges (kRanges.size() when unknown).
size_t range_index(const std::string& range) {
  for (size_t i = 0; i < kRanges.size(); ++i) {
    if (range == kRanges[i].second) return i;
  }
  return kRanges.size();
}

// Whether a smaller value of `metric` means a faster run (a duration), rather than a larger (a rate).
bool is_duration(Metric metric) {
  return metric == Metric::kIterationTime || metric == Metric::kLayerForward ||
         metric == Metric::kLayerBackward;
}

// A case counts as simulated faster when it is faster by more than this fraction: a case fitted
// exactly (a stack's one calibration case) would otherwise count by the sign of a rounding error.
constexpr double kFasterBy = 1e-3;

using Key = std::tuple<std::string, std::string, size_t, std::string>;  // framework, GPU, scale, role

}  // namespace

std::string gpu_range(int64_t gpus) {
  for (const auto& [up_to, name] : kRanges) {
    if (up_to == 0 || gpus <= up_to) return name;
  }
  return kRanges.back().second;
}

std::vector<std::string> gpu_ranges() {
  std::vector<std::string> out;
  out.reserve(kRanges.size());
  for (const auto& range : kRanges) out.emplace_back(range.second);
  return out;
}

std::string regime_framework(const config::Scenario& scenario) {
  const std::optional<config::StackProfile>& stack = scenario.cluster.hardware.stack;
  if (scenario.framework == config::Framework::kGeneric && stack) return stack->framework;
  return std::string(config::to_string(scenario.framework));
}

std::vector<AccuracyRow> accuracy_rows(const ValidationSet& set, const std::vector<CaseResult>& results) {
  struct Group {
    std::vector<double> abs_errors;
    int64_t faster = 0;
    std::set<std::string> suites;
  };
  std::map<Key, Group> groups;
  for (size_t i = 0; i < set.cases.size(); ++i) {
    const Case& c = set.cases[i];
    const CaseResult& r = results[i];
    const std::optional<double> v = simulated_value(r);
    if (!v || !is_scored(c) || !timed(c.metric)) continue;
    const Measurement& m = r.measurement;
    Group& g = groups[{m.framework, m.gpu, range_index(gpu_range(m.gpus)), std::string(to_string(m.role))}];
    const double error = relative_error(*v, c.published);
    g.abs_errors.push_back(std::abs(error));
    g.faster += (is_duration(c.metric) ? -error : error) > kFasterBy ? 1 : 0;
    g.suites.insert(c.suite);
  }
  std::vector<AccuracyRow> out;
  for (const auto& [key, g] : groups) {
    const ErrorSummary e = summarize_errors(g.abs_errors);
    out.push_back({std::get<0>(key), std::get<1>(key), kRanges[std::get<2>(key)].second, std::get<3>(key),
                   static_cast<int64_t>(e.cases), e.median_abs_error, e.max_abs_error, g.faster,
                   std::vector<std::string>(g.suites.begin(), g.suites.end())});
  }
  return out;
}

std::string accuracy_yaml(const std::vector<AccuracyRow>& rows) {
  YAML::Emitter out;
  out << YAML::BeginMap << YAML::Key << "schema_version" << YAML::Value << 1 << YAML::Key << "regimes"
      << YAML::Value << YAML::BeginSeq;
  for (const AccuracyRow& r : rows) {
    out << YAML::Flow << YAML::BeginMap << YAML::Key << "framework" << YAML::Value << r.framework << YAML::Key
        << "gpu" << YAML::Value << r.gpu << YAML::Key << "gpus" << YAML::Value << r.gpus << YAML::Key
        << "role" << YAML::Value << r.role << YAML::Key << "cases" << YAML::Value << r.cases << YAML::Key
        << "median_abs_error" << YAML::Value << fmt::format("{:.4f}", r.median_abs_error) << YAML::Key
        << "max_abs_error" << YAML::Value << fmt::format("{:.4f}", r.max_abs_error) << YAML::Key
        << "simulated_faster" << YAML::Value << r.simulated_faster << YAML::Key << "suites" << YAML::Value
        << YAML::Flow << r.suites << YAML::EndMap;
  }
  out << YAML::EndSeq << YAML::EndMap;
  return "# How far trainsim's predictions land from published measurements, by framework, GPU and\n"
         "# scale: the scored, timed cases of scenarios/validation, validation cases (never fitted on)\n"
         "# and calibration cases (single-node runs a stack profile may be fitted on) apart; |relative\n"
         "# error| as fractions, and how many the simulator predicts faster than measured. `trainsim run`\n"
         "# quotes the rows of its GPU and scale. Written by, and checked in ctest against:\n"
         "#   trainsim validate scenarios/validation --no-hardware-only --write-accuracy "
         "scenarios/validation/accuracy.yaml\n" +
         std::string(out.c_str()) + "\n";
}

std::vector<AccuracyRow> parse_accuracy(const std::string& text, const std::string& file) {
  config::Diagnostics diagnostics;
  const std::optional<config::Node> root = config::load_input_text(text, file, diagnostics);
  diagnostics.throw_if_any();
  config::MapReader top(*root);
  top.child("schema_version");
  const config::Node regimes = top.child("regimes");
  top.finish();
  if (!regimes.is_sequence()) {
    regimes.error(
        "expected the list of regimes an accuracy file holds; regenerate it with trainsim validate "
        "--write-accuracy");
    diagnostics.throw_if_any();
  }
  std::vector<AccuracyRow> rows;
  for (const config::Node& regime : regimes.elements()) {
    config::MapReader r(regime);
    AccuracyRow row;
    r.require("framework", row.framework);
    r.require("gpu", row.gpu);
    if (r.require("gpus", row.gpus) && range_index(row.gpus) == kRanges.size()) {
      r.child("gpus").error(
          fmt::format("unknown range \"{}\" (one of {})", row.gpus, fmt::join(gpu_ranges(), ", ")));
    }
    Role role = Role::kValidation;
    if (r.require("role", role)) row.role = std::string(to_string(role));
    r.require("cases", row.cases, config::kNonNegative);
    r.require("median_abs_error", row.median_abs_error, config::RealRange{0});
    r.require("max_abs_error", row.max_abs_error, config::RealRange{0});
    r.require("simulated_faster", row.simulated_faster, config::kNonNegative);
    r.require("suites", row.suites, "a list of suite names, e.g. [korthikanti-table5]");
    r.finish();
    rows.push_back(std::move(row));
  }
  diagnostics.throw_if_any();
  return rows;
}

std::vector<AccuracyRow> load_accuracy(const std::filesystem::path& file) {
  std::ifstream in(file);
  if (!in) config::throw_config_error({file.string()}, "", "cannot open it");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return parse_accuracy(text, file.string());
}

std::vector<std::string> accuracy_drift(const std::vector<AccuracyRow>& shipped,
                                        const std::vector<AccuracyRow>& measured, double tolerance) {
  const auto key = [](const AccuracyRow& r) {
    return fmt::format("{} on {} at {} GPUs ({})", r.framework, r.gpu, r.gpus, r.role);
  };
  std::map<std::string, const AccuracyRow*> by_key;
  for (const AccuracyRow& r : measured) by_key[key(r)] = &r;
  std::vector<std::string> out;
  for (const AccuracyRow& s : shipped) {
    const auto it = by_key.find(key(s));
    if (it == by_key.end()) {
      out.push_back(fmt::format("{}: in the file, not among the cases validated", key(s)));
      continue;
    }
    const AccuracyRow& m = *it->second;
    by_key.erase(it);
    if (m.cases != s.cases || m.simulated_faster != s.simulated_faster) {
      out.push_back(fmt::format("{}: {} cases, {} simulated faster; the file says {} and {}", key(s), m.cases,
                                m.simulated_faster, s.cases, s.simulated_faster));
    }
    for (const auto& [name, file_value, value] :
         {std::tuple{"median", s.median_abs_error, m.median_abs_error},
          {"max", s.max_abs_error, m.max_abs_error}}) {
      if (std::abs(value - file_value) > tolerance) {
        out.push_back(fmt::format("{}: {} |error| {:.1f}%; the file says {:.1f}%", key(s), name, 100 * value,
                                  100 * file_value));
      }
    }
  }
  for (const auto& [k, m] : by_key) out.push_back(fmt::format("{}: validated, not in the file", k));
  return out;
}

const std::vector<AccuracyRow>& shipped_accuracy() {
  static const std::vector<AccuracyRow> rows = parse_accuracy(kShippedAccuracyYaml, kShippedAccuracyFile);
  return rows;
}

report::AccuracyEvidence accuracy_for(const config::Scenario& scenario,
                                      const std::vector<AccuracyRow>& rows) {
  const std::string& gpu = scenario.cluster.hardware.gpu.name;
  const size_t range = range_index(gpu_range(scenario.cluster.gpus));
  report::AccuracyEvidence out{regime_framework(scenario), gpu, std::string(kRanges[range].second), {}, {}};
  // The scale nearest the scenario's among those its GPU has rows at (the smaller on a tie).
  size_t nearest = kRanges.size();
  const auto distance = [&](size_t r) { return r > range ? r - range : range - r; };
  for (const AccuracyRow& r : rows) {
    const size_t at = range_index(r.gpus);
    if (r.gpu == gpu && (nearest == kRanges.size() || distance(at) < distance(nearest) ||
                         (distance(at) == distance(nearest) && at < nearest))) {
      nearest = at;
    }
  }
  for (const AccuracyRow& r : rows) {
    if (r.gpu == gpu && range_index(r.gpus) == nearest) out.rows.push_back(r);
  }
  if (nearest != range && nearest != kRanges.size()) out.nearest_gpus = std::string(kRanges[nearest].second);
  return out;
}

}  // namespace trainsim::validate
