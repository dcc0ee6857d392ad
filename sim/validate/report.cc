#include "sim/validate/report.h"

#include <cmath>
#include <map>

#include <fmt/format.h>

#include "sim/common/text_table.h"
#include "sim/config/units.h"
#include "sim/engine/provenance.h"
#include "sim/validate/accuracy.h"
#include "sim/validate/metrics.h"
#include "sim/validate/statistics.h"

namespace trainsim::validate {
namespace {

using nlohmann::json;

std::string failure_of(const CaseResult& r) {
  return r.ok ? std::string("the measurement has no finite value") : r.error;
}

// The role a case's measurement reports; validation when it has none (it failed before knowing).
Role role_of_result(const CaseResult& r) { return r.ok ? r.measurement.role : Role::kValidation; }

// The case's value on the hardware profile beneath its stack: the hardware-only measurement, or the
// case's own when its profile is no stack profile.
std::optional<double> hardware_only_value(const CaseResult& r) {
  if (r.hardware_only) {
    const double v = r.hardware_only->simulated;
    return std::isfinite(v) ? std::optional<double>(v) : std::nullopt;
  }
  return r.ok && !r.measurement.stack && r.hardware_only_error.empty() ? simulated_value(r) : std::nullopt;
}

json summary_json(const std::vector<double>& abs_errors) {
  const ErrorSummary e = summarize_errors(abs_errors);
  if (e.cases == 0) return {{"cases", 0}, {"median_abs_error", json()}, {"max_abs_error", json()}};
  return {{"cases", e.cases}, {"median_abs_error", e.median_abs_error}, {"max_abs_error", e.max_abs_error}};
}

// Validation errors of the timed metrics against the GPUs a case runs on: does extrapolation degrade
// with scale?
json scaling_json(const ValidationSet& set, const std::vector<CaseResult>& results) {
  std::map<std::string, std::vector<double>> errors;  // by gpu_range
  for (size_t i = 0; i < set.cases.size(); ++i) {
    const std::optional<double> v = simulated_value(results[i]);
    if (!v || !is_scored(set.cases[i]) || !timed(set.cases[i].metric) ||
        role_of_result(results[i]) != Role::kValidation) {
      continue;
    }
    errors[gpu_range(results[i].measurement.gpus)].push_back(
        std::abs(relative_error(*v, set.cases[i].published)));
  }
  json out = json::array();
  for (const std::string& range : gpu_ranges()) {
    if (errors.count(range) == 0) continue;
    json row = summary_json(errors.at(range));
    row["gpus"] = range;
    out.push_back(row);
  }
  return out;
}

json accuracy_json(const ValidationSet& set, const std::vector<CaseResult>& results) {
  json out = json::array();
  for (const AccuracyRow& row : accuracy_rows(set, results)) out.push_back(to_json(row));
  return out;
}

json case_json(const Case& c, const CaseResult& r) {
  json j{{"id", c.id},
         {"suite", c.suite},
         {"file", c.display_file},
         {"source", {{"paper", c.paper}, {"where", c.where}}},
         {"confidence", to_string(c.confidence)},
         {"metric", to_string(c.metric)},
         {"unit", unit_of(c.metric)},
         {"comparison", to_string(c.comparison)},
         {"published", c.published},
         {"tolerance", {{c.tolerance.relative ? "relative" : "absolute", c.tolerance.value}}},
         {"scored", is_scored(c)},
         {"network", to_string(c.network)}};
  if (c.calculon) {
    j["calculon"] = *c.calculon;
    j["calculon_relative_error"] = relative_error(*c.calculon, c.published);
  }
  j["role"] = to_string(role_of_result(r));
  const json measured = r.ok ? to_json(r.measurement) : json::object();
  for (const char* key : {"gpus", "profile", "stack"}) {
    if (measured.contains(key)) j[key] = measured.at(key);
  }
  if (const std::optional<double> h = hardware_only_value(r)) {
    j["hardware_only"] = {{"simulated", *h}, {"relative_error", relative_error(*h, c.published)}};
  } else if (!r.hardware_only_error.empty()) {
    j["hardware_only"] = {{"error", r.hardware_only_error}};
  }
  if (const std::optional<double> v = simulated_value(r)) {
    j["simulated"] = *v;
    j["relative_error"] = relative_error(*v, c.published);
    j["pass"] = within_tolerance(c, *v);
    for (const char* key : {"iteration_time_s", "breakdown", "fits", "infeasible", "layers_measured",
                            "volume_bytes", "baseline_volume_bytes"}) {
      if (measured.contains(key)) j[key] = measured.at(key);
    }
  } else {
    j["error"] = failure_of(r);
  }
  for (const char* key : {"wall_s", "cpu_s"}) {
    if (measured.contains(key)) j[key] = measured.at(key);
  }
  json assumptions = json::object();
  for (const Assumption& a : c.assumptions) assumptions[a.key] = a.text;
  j["assumptions"] = assumptions;
  return j;
}

std::string value_text(const std::string& metric, double v) {
  if (metric == "iteration_time_s" || metric == "layer_forward_s" || metric == "layer_backward_s") {
    return v >= 1 ? fmt::format("{:.3f} s", v) : fmt::format("{:.2f} ms", 1e3 * v);
  }
  if (metric == "max_sequence_tokens") return config::format_count(static_cast<int64_t>(v));
  if (metric == "comm_volume_ratio") return fmt::format("{:.3f}", v);
  if (metric == "tokens_per_s_per_gpu") return fmt::format("{:.0f} tok/s", v);
  if (metric == "mfu" || metric == "hfu" || metric == "executed_flops_utilization" ||
      metric == "megatron_deepspeed_mfu") {
    return fmt::format("{:.1f}%", 100 * v);
  }
  return fmt::format("{:.1f} TF/s", v);
}

// The shape check's verdict on `values` (in the check's case order).
json evaluate_shape(const ShapeCheck& check, const std::vector<std::optional<double>>& values,
                    const std::string& metric) {
  for (size_t i = 0; i < values.size(); ++i) {
    if (!values[i]) {
      return {{"pass", false}, {"detail", fmt::format("case {} has no value", check.cases[i])}};
    }
  }
  std::string detail;
  bool pass = true;
  switch (check.kind) {
    case ShapeKind::kRising:
      for (size_t i = 0; i < values.size(); ++i) {
        if (i > 0) {
          const bool rises = *values[i] > *values[i - 1];
          pass = pass && rises;
          detail += rises ? " < " : " !< ";
        }
        detail += value_text(metric, *values[i]);
      }
      break;
    case ShapeKind::kBelow: {
      const double gap = *values[1] - *values[0];
      pass = gap >= check.min_gap && gap <= check.max_gap;
      detail = fmt::format("{} below {} by {:.4g} (allowed {:.4g} to {:.4g})", value_text(metric, *values[0]),
                           value_text(metric, *values[1]), gap, check.min_gap, check.max_gap);
      break;
    }
    case ShapeKind::kRatioAtLeast: {
      const double ratio = *values[0] / *values[1];
      pass = ratio >= check.ratio;
      detail = fmt::format("{} / {} = {:.3g} (at least {:.3g})", value_text(metric, *values[0]),
                           value_text(metric, *values[1]), ratio, check.ratio);
      break;
    }
  }
  return {{"pass", pass}, {"detail", detail}};
}

std::string percent(const json& v) {
  return v.is_number() ? fmt::format("{:.2f}%", 100 * v.get<double>()) : std::string("-");
}

}  // namespace

json make_report(const ValidationSet& set, const std::vector<CaseResult>& results,
                 const ReportContext& context) {
  json cases = json::array();
  std::map<std::string, size_t> index;
  double cpu_s = 0;
  for (size_t i = 0; i < set.cases.size(); ++i) {
    cases.push_back(case_json(set.cases[i], results[i]));
    index[set.cases[i].id] = i;
    if (results[i].ok) cpu_s += results[i].measurement.cpu_s;
  }

  json summary = json::object();
  json gate{{"applied", context.gate}, {"thresholds", json::object()}, {"violations", json::array()}};
  for (const Suite& suite : set.suites) {
    size_t total = 0, scored = 0, passed = 0, failed = 0, errors = 0;
    std::vector<double> abs_errors, calculon_errors, hardware_errors, calibration_errors;
    std::vector<GatedCase> gated;
    for (size_t i = 0; i < set.cases.size(); ++i) {
      const Case& c = set.cases[i];
      if (c.suite != suite.name) continue;
      ++total;
      const std::optional<double> v = simulated_value(results[i]);
      if (!v) {
        ++errors;
      } else if (within_tolerance(c, *v)) {
        ++passed;
      } else {
        ++failed;
      }
      if (!is_scored(c)) continue;
      if (role_of_result(results[i]) == Role::kCalibration) {
        if (v) calibration_errors.push_back(std::abs(relative_error(*v, c.published)));
        continue;
      }
      ++scored;
      if (v) abs_errors.push_back(std::abs(relative_error(*v, c.published)));
      if (const std::optional<double> h = hardware_only_value(results[i])) {
        hardware_errors.push_back(std::abs(relative_error(*h, c.published)));
      }
      if (c.calculon) calculon_errors.push_back(std::abs(relative_error(*c.calculon, c.published)));
      gated.push_back({c.id,
                       v ? std::optional<double>(std::abs(relative_error(*v, c.published))) : std::nullopt,
                       failure_of(results[i])});
    }
    if (total == 0) continue;
    json s{{"cases", total}, {"scored", scored}, {"passed", passed}, {"failed", failed}, {"errors", errors}};
    const ErrorSummary e = summarize_errors(abs_errors);
    s["median_abs_error"] = e.cases > 0 ? json(e.median_abs_error) : json();
    s["p90_abs_error"] = e.cases > 0 ? json(e.p90_abs_error) : json();
    s["max_abs_error"] = e.cases > 0 ? json(e.max_abs_error) : json();
    if (!calculon_errors.empty()) s["calculon"] = summary_json(calculon_errors);
    s["hardware_only"] = summary_json(hardware_errors);
    s["calibration"] = summary_json(calibration_errors);
    summary[suite.name] = s;
    if (suite.gate) {
      gate["thresholds"][suite.name] = {
          {"median_abs_error", suite.gate->median_abs_error},
          {"max_abs_error", suite.gate->max_abs_error ? json(*suite.gate->max_abs_error) : json()}};
      for (const std::string& v : gate_violations(suite.name, *suite.gate, gated))
        gate["violations"].push_back(v);
    }
  }
  gate["pass"] = gate["violations"].empty();

  json shapes = json::array();
  for (const Suite& suite : set.suites) {
    for (const ShapeCheck& check : suite.shape_checks) {
      bool present = true;
      std::vector<std::optional<double>> simulated, published;
      std::string metric;
      for (const std::string& id : check.cases) {
        const auto it = index.find(id);
        if (it == index.end()) {
          present = false;  // the case was filtered out (--suite)
          break;
        }
        simulated.push_back(simulated_value(results[it->second]));
        published.push_back(set.cases[it->second].published);
        metric = std::string(to_string(set.cases[it->second].metric));
      }
      if (!present) continue;
      shapes.push_back({{"suite", suite.name},
                        {"name", check.name},
                        {"kind", to_string(check.kind)},
                        {"source", check.source},
                        {"cases", check.cases},
                        {"simulated", evaluate_shape(check, simulated, metric)},
                        {"published", evaluate_shape(check, published, metric)}});
    }
  }

  json provenance = engine::provenance(context.command_line);
  provenance["jobs"] = context.jobs;
  return {{"schema_version", 1},
          {"provenance", provenance},
          {"wall_s", context.wall_s},
          {"cpu_s", cpu_s},
          {"cases", cases},
          {"summary", summary},
          {"by_gpus", scaling_json(set, results)},
          {"accuracy", accuracy_json(set, results)},
          {"shape_checks", shapes},
          {"gate", gate}};
}

std::string render_table(const json& report) {
  std::string out = fmt::format(
      "# trainsim validate: {} case{} in {} suite{} ({} jobs, {:.1f} s wall, {:.1f} s CPU in the cases)\n",
      report.at("cases").size(), report.at("cases").size() == 1 ? "" : "s", report.at("summary").size(),
      report.at("summary").size() == 1 ? "" : "s", report.at("provenance").at("jobs").get<int>(),
      report.at("wall_s").get<double>(), report.at("cpu_s").get<double>());
  using Align = TextTable::Align;
  const std::vector<TextTable::Column> case_columns = {
      {"# case", Align::kLeft, 44},     {"status", Align::kLeft, 6},      {"role", Align::kLeft, 5},
      {"confidence", Align::kLeft, 11}, {"source", Align::kLeft, 34},     {"", Align::kRight, 2},
      {"published", Align::kRight, 11}, {"simulated", Align::kRight, 11}, {"error", Align::kRight, 8},
      {"hw.error", Align::kRight, 8},   {"calculon", Align::kRight, 11},  {"c.error", Align::kRight, 8},
      {"compute", Align::kRight, 9},    {"exp.comm", Align::kRight, 9},   {"bubble", Align::kRight, 9},
      {"offload", Align::kRight, 9}};
  std::string suite;
  TextTable cases(case_columns);
  const auto flush = [&] {
    if (!cases.empty()) out += cases.render();
    cases = TextTable(case_columns);
  };
  for (const json& c : report.at("cases")) {
    if (c.at("suite") != suite) {
      flush();
      suite = c.at("suite").get<std::string>();
      out += fmt::format("\n# suite {} ({})\n", suite, c.at("source").at("paper").get<std::string>());
    }
    const std::string metric = c.at("metric").get<std::string>();
    const std::string comparison = c.at("comparison") == "at_least"  ? ">="
                                   : c.at("comparison") == "at_most" ? "<="
                                                                     : "=";
    const bool has_value = c.contains("simulated");
    const std::string status = !has_value ? "error" : c.at("pass").get<bool>() ? "pass" : "FAIL";
    std::vector<std::string> breakdown(4, "");
    if (c.contains("breakdown")) {
      const json& b = c.at("breakdown");
      breakdown = {fmt::format("{:.4g}", b.at("compute_s").get<double>()),
                   fmt::format("{:.4g}", b.at("exposed_comm_s").get<double>()),
                   fmt::format("{:.4g}", b.at("bubble_s").get<double>()),
                   fmt::format("{:.4g}", b.at("offload_stall_s").get<double>())};
    }
    const bool has_hardware = c.contains("hardware_only") && c.at("hardware_only").contains("relative_error");
    std::vector<std::string> row = {
        c.at("id").get<std::string>(),
        status,
        c.at("role").get<std::string>().substr(0, 5),
        c.at("confidence").get<std::string>(),
        c.at("source").at("where").get<std::string>(),
        comparison,
        value_text(metric, c.at("published").get<double>()),
        has_value ? value_text(metric, c.at("simulated").get<double>()) : std::string("-"),
        has_value ? fmt::format("{:+.1f}%", 100 * c.at("relative_error").get<double>()) : std::string("-"),
        has_hardware ? fmt::format("{:+.1f}%", 100 * c.at("hardware_only").at("relative_error").get<double>())
                     : std::string("-"),
        c.contains("calculon") ? value_text(metric, c.at("calculon").get<double>()) : std::string("-"),
        c.contains("calculon") ? fmt::format("{:+.1f}%", 100 * c.at("calculon_relative_error").get<double>())
                               : std::string("-")};
    row.insert(row.end(), breakdown.begin(), breakdown.end());
    cases.add_row(std::move(row));
    if (c.contains("error")) cases.add_line(fmt::format("    error: {}", c.at("error").get<std::string>()));
    if (c.contains("hardware_only") && c.at("hardware_only").contains("error")) {
      cases.add_line(fmt::format("    error on the hardware profile alone: {}",
                                 c.at("hardware_only").at("error").get<std::string>()));
    }
    if (c.contains("infeasible")) {
      cases.add_line(fmt::format("    note: the simulated plan does not fit: {}",
                                 c.at("infeasible").get<std::string>()));
    }
  }
  flush();
  for (const json& c : report.at("cases")) {
    if (c.contains("simulated") && !c.at("pass").get<bool>()) {
      out += fmt::format(
          "\n# where a case's simulated time goes (breakdown, why, memory): trainsim run CASE_FILE, e.g.\n"
          "#   trainsim run {}\n",
          c.at("file").get<std::string>());
      break;
    }
  }

  out +=
      "\n# validation cases only (calibration cases, which stack profiles may be fitted on, in the last "
      "column); hw-only: the same cases on the hardware profiles beneath the stacks\n";
  TextTable suites({{"# suite", Align::kLeft, 22},
                    {"cases", Align::kRight, 5},
                    {"valid", Align::kRight, 5},
                    {"pass", Align::kRight, 5},
                    {"fail", Align::kRight, 5},
                    {"errors"},
                    {"median|e|", Align::kRight, 10},
                    {"p90|e|", Align::kRight, 10},
                    {"max|e|", Align::kRight, 10},
                    {"hw-only med/max", Align::kRight, 17},
                    {"calculon med/max", Align::kRight, 17},
                    {"calib. med/max", Align::kRight, 17}});
  const auto med_max = [](const json& s, const char* key) {
    if (!s.contains(key) || s.at(key).at("cases").get<int>() == 0) return std::string("-");
    return fmt::format("{}/{}", percent(s.at(key).at("median_abs_error")),
                       percent(s.at(key).at("max_abs_error")));
  };
  for (const auto& [name, s] : report.at("summary").items()) {
    suites.add_row({name, std::to_string(s.at("cases").get<int>()), std::to_string(s.at("scored").get<int>()),
                    std::to_string(s.at("passed").get<int>()), std::to_string(s.at("failed").get<int>()),
                    std::to_string(s.at("errors").get<int>()), percent(s.at("median_abs_error")),
                    percent(s.at("p90_abs_error")), percent(s.at("max_abs_error")),
                    med_max(s, "hardware_only"), med_max(s, "calculon"), med_max(s, "calibration")});
  }
  out += suites.render();
  if (!report.at("by_gpus").empty()) {
    out += "\n# validation error against the GPUs a case runs on (every suite)\n";
    TextTable by_gpus({{"# GPUs", Align::kLeft, 10},
                       {"cases", Align::kRight, 5},
                       {"median|e|", Align::kRight, 10},
                       {"max|e|", Align::kRight, 10}});
    for (const json& row : report.at("by_gpus")) {
      by_gpus.add_row({row.at("gpus").get<std::string>(), std::to_string(row.at("cases").get<int>()),
                       percent(row.at("median_abs_error")), percent(row.at("max_abs_error"))});
    }
    out += by_gpus.render();
  }
  if (!report.at("accuracy").empty()) {
    out += "\n# error by framework, GPU and scale (what `trainsim run` quotes for its GPU and scale)\n";
    TextTable regimes({{"# framework", Align::kLeft, 19},
                       {"GPU", Align::kLeft, 24},
                       {"GPUs", Align::kLeft, 7},
                       {"role", Align::kLeft, 5},
                       {"cases", Align::kRight, 5},
                       {"median|e|", Align::kRight, 10},
                       {"max|e|", Align::kRight, 10},
                       {"sim. faster", Align::kRight, 11}});
    for (const json& row : report.at("accuracy")) {
      regimes.add_row({row.at("framework").get<std::string>(), row.at("gpu").get<std::string>(),
                       row.at("gpus").get<std::string>(), row.at("role").get<std::string>().substr(0, 5),
                       std::to_string(row.at("cases").get<int>()), percent(row.at("median_abs_error")),
                       percent(row.at("max_abs_error")),
                       std::to_string(row.at("simulated_faster").get<int>())});
    }
    out += regimes.render();
  }

  if (!report.at("shape_checks").empty()) out += "\n# shape checks (simulated; published)\n";
  for (const json& check : report.at("shape_checks")) {
    out += fmt::format(
        "{:<4} {}: {}\n     simulated: {}\n     published: {}{}\n",
        check.at("simulated").at("pass").get<bool>() ? "pass" : "FAIL", check.at("suite").get<std::string>(),
        check.at("name").get<std::string>(), check.at("simulated").at("detail").get<std::string>(),
        check.at("published").at("detail").get<std::string>(),
        check.at("published").at("pass").get<bool>() ? "" : " (the published data does not hold it)");
  }

  const json& gate = report.at("gate");
  if (!gate.at("thresholds").empty()) {
    out += fmt::format("\n# gate{}: ",
                       gate.at("applied").get<bool>() ? "" : " (not applied; --gate applies it)");
    std::string sep;
    for (const auto& [name, t] : gate.at("thresholds").items()) {
      out += fmt::format("{}{} median |error| <= {}", sep, name, percent(t.at("median_abs_error")));
      if (t.at("max_abs_error").is_number())
        out += fmt::format(", every case <= {}", percent(t.at("max_abs_error")));
      sep = "; ";
    }
    out += fmt::format(" -> {}\n", gate.at("pass").get<bool>() ? "holds" : "violated");
    for (const json& v : gate.at("violations")) out += fmt::format("  {}\n", v.get<std::string>());
  }
  return out;
}

std::string render_csv(const json& report) {
  std::string out =
      "id,suite,role,profile,gpus,metric,comparison,confidence,published,simulated,relative_error,pass,"
      "hardware_only_simulated,hardware_only_relative_error,calculon,calculon_relative_error,compute_s,"
      "exposed_comm_s,bubble_s,offload_stall_s,error\n";
  const auto number = [](const json& c, const char* key) {
    return c.contains(key) ? fmt::format("{:.9g}", c.at(key).get<double>()) : std::string();
  };
  for (const json& c : report.at("cases")) {
    std::string breakdown = ",,,";
    if (c.contains("breakdown")) {
      const json& b = c.at("breakdown");
      breakdown = fmt::format("{:.9g},{:.9g},{:.9g},{:.9g}", b.at("compute_s").get<double>(),
                              b.at("exposed_comm_s").get<double>(), b.at("bubble_s").get<double>(),
                              b.at("offload_stall_s").get<double>());
    }
    std::string error = c.contains("error") ? c.at("error").get<std::string>() : std::string();
    std::string quoted = "\"";
    for (char ch : error) quoted += ch == '"' ? std::string("\"\"") : std::string(1, ch);
    quoted += "\"";
    const json hardware = c.value("hardware_only", json::object());
    out += fmt::format(
        "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", c.at("id").get<std::string>(),
        c.at("suite").get<std::string>(), c.at("role").get<std::string>(), c.value("profile", std::string()),
        c.contains("gpus") ? std::to_string(c.at("gpus").get<int64_t>()) : std::string(),
        c.at("metric").get<std::string>(), c.at("comparison").get<std::string>(),
        c.at("confidence").get<std::string>(), number(c, "published"), number(c, "simulated"),
        number(c, "relative_error"), c.contains("pass") ? (c.at("pass").get<bool>() ? "true" : "false") : "",
        number(hardware, "simulated"), number(hardware, "relative_error"), number(c, "calculon"),
        number(c, "calculon_relative_error"), breakdown, error.empty() ? std::string() : quoted);
  }
  return out;
}

}  // namespace trainsim::validate
