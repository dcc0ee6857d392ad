#include "sim/validate/report.h"

#include <cmath>
#include <map>

#include <fmt/format.h>

#include "sim/engine/provenance.h"
#include "sim/validate/metrics.h"

namespace trainsim::validate {
namespace {

using nlohmann::json;

CaseOutcome outcome_of(const Case& c, const CaseResult& r) {
  CaseOutcome o;
  o.spec = c;
  if (r.ok) {
    o.measurement = r.measurement;
    o.role = r.measurement.role;
  }
  o.simulated = simulated_value(r);
  if (!o.simulated) o.error = r.ok ? std::string("the measurement has no finite value") : r.error;
  if (r.hardware_only) {
    const double v = r.hardware_only->simulated;
    if (std::isfinite(v)) o.hardware_only = v;
  } else if (r.ok && !r.measurement.stack && r.hardware_only_error.empty()) {
    o.hardware_only = o.simulated;  // no stack profile: the case ran on the hardware profile
  }
  o.hardware_only_error = r.hardware_only_error;
  return o;
}

SuiteSummary summarize_suite(const Suite& suite, const std::vector<CaseOutcome>& cases,
                             std::vector<GatedCase>& gated) {
  SuiteSummary s;
  s.name = suite.name;
  std::vector<double> abs_errors, calculon_errors, hardware_errors, calibration_errors;
  for (const CaseOutcome& o : cases) {
    const Case& c = o.spec;
    if (c.suite != suite.name) continue;
    ++s.cases;
    if (!o.simulated) {
      ++s.errors;
    } else if (o.pass()) {
      ++s.passed;
    } else {
      ++s.failed;
    }
    if (!is_scored(c)) continue;
    if (o.role == Role::kCalibration) {
      if (o.simulated) calibration_errors.push_back(std::abs(o.relative_error()));
      continue;
    }
    ++s.scored;
    if (o.simulated) abs_errors.push_back(std::abs(o.relative_error()));
    if (o.hardware_only) hardware_errors.push_back(std::abs(relative_error(*o.hardware_only, c.published)));
    if (c.calculon) calculon_errors.push_back(std::abs(relative_error(*c.calculon, c.published)));
    gated.push_back(
        {c.id, o.simulated ? std::optional<double>(std::abs(o.relative_error())) : std::nullopt, o.error});
  }
  s.validation = summarize_errors(abs_errors);
  if (!calculon_errors.empty()) s.calculon = summarize_errors(calculon_errors);
  s.hardware_only = summarize_errors(hardware_errors);
  s.calibration = summarize_errors(calibration_errors);
  return s;
}

// Validation errors of the timed metrics against the GPUs a case runs on: does extrapolation degrade
// with scale?
std::vector<ScaleErrors> errors_by_scale(const std::vector<CaseOutcome>& cases) {
  std::map<std::string, std::vector<double>> errors;  // by gpu_range
  for (const CaseOutcome& o : cases) {
    if (!o.simulated || !is_scored(o.spec) || !timed(o.spec.metric) || o.role != Role::kValidation) continue;
    errors[gpu_range(o.measurement->gpus)].push_back(std::abs(o.relative_error()));
  }
  std::vector<ScaleErrors> out;
  for (const std::string& range : gpu_ranges()) {
    if (errors.count(range) > 0) out.push_back({range, summarize_errors(errors.at(range))});
  }
  return out;
}

// The shape check's verdict on `values` (in the check's case order).
ShapeVerdict evaluate_shape(const ShapeCheck& check, const std::vector<std::optional<double>>& values,
                            Metric metric) {
  for (size_t i = 0; i < values.size(); ++i) {
    if (!values[i]) return {false, fmt::format("case {} has no value", check.cases[i])};
  }
  ShapeVerdict out{true, ""};
  switch (check.kind) {
    case ShapeKind::kRising:
      for (size_t i = 0; i < values.size(); ++i) {
        if (i > 0) {
          const bool rises = *values[i] > *values[i - 1];
          out.pass = out.pass && rises;
          out.detail += rises ? " < " : " !< ";
        }
        out.detail += format_value(metric, *values[i]);
      }
      break;
    case ShapeKind::kBelow: {
      const double gap = *values[1] - *values[0];
      out.pass = gap >= check.min_gap && gap <= check.max_gap;
      out.detail =
          fmt::format("{} below {} by {:.4g} (allowed {:.4g} to {:.4g})", format_value(metric, *values[0]),
                      format_value(metric, *values[1]), gap, check.min_gap, check.max_gap);
      break;
    }
    case ShapeKind::kRatioAtLeast: {
      const double ratio = *values[0] / *values[1];
      out.pass = ratio >= check.ratio;
      out.detail = fmt::format("{} / {} = {:.3g} (at least {:.3g})", format_value(metric, *values[0]),
                               format_value(metric, *values[1]), ratio, check.ratio);
      break;
    }
  }
  return out;
}

std::vector<ShapeOutcome> shape_outcomes(const ValidationSet& set, const std::vector<CaseOutcome>& cases) {
  std::map<std::string, const CaseOutcome*> by_id;
  for (const CaseOutcome& o : cases) by_id[o.spec.id] = &o;
  std::vector<ShapeOutcome> out;
  for (const Suite& suite : set.suites) {
    for (const ShapeCheck& check : suite.shape_checks) {
      std::vector<std::optional<double>> simulated, published;
      Metric metric{};
      for (const std::string& id : check.cases) {
        const auto it = by_id.find(id);
        if (it == by_id.end()) break;  // the case was filtered out (--suite)
        simulated.push_back(it->second->simulated);
        published.push_back(it->second->spec.published);
        metric = it->second->spec.metric;
      }
      if (simulated.size() != check.cases.size()) continue;
      out.push_back({suite.name, check, evaluate_shape(check, simulated, metric),
                     evaluate_shape(check, published, metric)});
    }
  }
  return out;
}

// A statistic of `e`, null when it summarises no case.
json statistic(const ErrorSummary& e, double value) { return e.cases > 0 ? json(value) : json(); }

json to_json(const ErrorSummary& e) {
  return {{"cases", e.cases},
          {"median_abs_error", statistic(e, e.median_abs_error)},
          {"max_abs_error", statistic(e, e.max_abs_error)}};
}

json to_json(const CaseOutcome& o) {
  const Case& c = o.spec;
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
         {"network", to_string(c.network)},
         {"role", to_string(o.role)}};
  if (c.calculon) {
    j["calculon"] = *c.calculon;
    j["calculon_relative_error"] = relative_error(*c.calculon, c.published);
  }
  const json measured = o.measurement ? to_json(*o.measurement) : json::object();
  for (const char* key : {"gpus", "profile", "stack", "wall_s", "cpu_s"}) {
    if (measured.contains(key)) j[key] = measured.at(key);
  }
  if (o.hardware_only) {
    j["hardware_only"] = {{"simulated", *o.hardware_only},
                          {"relative_error", relative_error(*o.hardware_only, c.published)}};
  } else if (!o.hardware_only_error.empty()) {
    j["hardware_only"] = {{"error", o.hardware_only_error}};
  }
  if (o.simulated) {
    j["simulated"] = *o.simulated;
    j["relative_error"] = o.relative_error();
    j["pass"] = o.pass();
    for (const char* key : {"iteration_time_s", "breakdown", "fits", "infeasible", "layers_measured",
                            "volume_bytes", "baseline_volume_bytes"}) {
      if (measured.contains(key)) j[key] = measured.at(key);
    }
  } else {
    j["error"] = o.error;
  }
  json assumptions = json::object();
  for (const Assumption& a : c.assumptions) assumptions[a.key] = a.text;
  j["assumptions"] = assumptions;
  return j;
}

json to_json(const SuiteSummary& s) {
  const ErrorSummary& v = s.validation;
  json out{{"cases", s.cases},
           {"scored", s.scored},
           {"passed", s.passed},
           {"failed", s.failed},
           {"errors", s.errors},
           {"median_abs_error", statistic(v, v.median_abs_error)},
           {"p90_abs_error", statistic(v, v.p90_abs_error)},
           {"max_abs_error", statistic(v, v.max_abs_error)},
           {"hardware_only", to_json(s.hardware_only)},
           {"calibration", to_json(s.calibration)}};
  if (s.calculon) out["calculon"] = to_json(*s.calculon);
  return out;
}

json to_json(const ShapeVerdict& v) { return {{"pass", v.pass}, {"detail", v.detail}}; }

json to_json(const GateOutcome& g) {
  json thresholds = json::object();
  for (const auto& [suite, gate] : g.thresholds) {
    thresholds[suite] = {{"median_abs_error", gate.median_abs_error},
                         {"max_abs_error", gate.max_abs_error ? json(*gate.max_abs_error) : json()}};
  }
  return {
      {"applied", g.applied}, {"thresholds", thresholds}, {"violations", g.violations}, {"pass", g.pass()}};
}

}  // namespace

double CaseOutcome::relative_error() const {
  return validate::relative_error(simulated.value(), spec.published);
}

bool CaseOutcome::pass() const { return within_tolerance(spec, simulated.value()); }

ValidationReport make_report(const ValidationSet& set, const std::vector<CaseResult>& results,
                             const ReportContext& context) {
  ValidationReport report;
  report.provenance = engine::provenance(context.command_line);
  report.jobs = context.jobs;
  report.wall_s = context.wall_s;
  for (size_t i = 0; i < set.cases.size(); ++i) {
    report.cases.push_back(outcome_of(set.cases[i], results[i]));
    if (results[i].ok) report.cpu_s += results[i].measurement.cpu_s;
  }
  report.gate.applied = context.gate;
  for (const Suite& suite : set.suites) {
    std::vector<GatedCase> gated;
    SuiteSummary summary = summarize_suite(suite, report.cases, gated);
    if (summary.cases == 0) continue;
    if (suite.gate) {
      report.gate.thresholds.emplace_back(suite.name, *suite.gate);
      for (std::string& v : gate_violations(suite.name, *suite.gate, gated))
        report.gate.violations.push_back(std::move(v));
    }
    report.suites.push_back(std::move(summary));
  }
  report.by_gpus = errors_by_scale(report.cases);
  report.accuracy = accuracy_rows(set, results);
  report.shape_checks = shape_outcomes(set, report.cases);
  return report;
}

json to_json(const ValidationReport& report) {
  json provenance = report.provenance;
  provenance["jobs"] = report.jobs;
  json cases = json::array();
  for (const CaseOutcome& o : report.cases) cases.push_back(to_json(o));
  json summary = json::object();
  for (const SuiteSummary& s : report.suites) summary[s.name] = to_json(s);
  json by_gpus = json::array();
  for (const ScaleErrors& row : report.by_gpus) {
    json j = to_json(row.errors);
    j["gpus"] = row.gpus;
    by_gpus.push_back(std::move(j));
  }
  json accuracy = json::array();
  for (const AccuracyRow& row : report.accuracy) accuracy.push_back(to_json(row));
  json shapes = json::array();
  for (const ShapeOutcome& s : report.shape_checks) {
    shapes.push_back({{"suite", s.suite},
                      {"name", s.check.name},
                      {"kind", to_string(s.check.kind)},
                      {"source", s.check.source},
                      {"cases", s.check.cases},
                      {"simulated", to_json(s.simulated)},
                      {"published", to_json(s.published)}});
  }
  return {{"schema_version", 1},         {"provenance", provenance}, {"wall_s", report.wall_s},
          {"cpu_s", report.cpu_s},       {"cases", cases},           {"summary", summary},
          {"by_gpus", by_gpus},          {"accuracy", accuracy},     {"shape_checks", shapes},
          {"gate", to_json(report.gate)}};
}

}  // namespace trainsim::validate
