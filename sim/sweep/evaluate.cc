#include "sim/sweep/evaluate.h"

#include <fmt/format.h>

#include "sim/analytic/campaign.h"
#include "sim/common/version.h"
#include "sim/estimate/iteration_time.h"
#include "sim/report/campaign.h"
#include "sim/report/inputs.h"
#include "sim/report/run_report.h"
#include "sim/workload/errors.h"

namespace trainsim::sweep {
namespace {

using nlohmann::json;

// `error` with its files named relative to the sweep file's directory, so that a result reads the
// same whatever directory the sweep ran from.
config::ConfigError relative_to_sweep(const config::ConfigError& error, const SweepFile& sweep) {
  std::vector<config::Diagnostic> out = error.diagnostics();
  for (config::Diagnostic& d : out) {
    if (d.location.file.empty()) continue;
    const std::filesystem::path file = std::filesystem::absolute(d.location.file).lexically_normal();
    d.location.file = file.lexically_relative(sweep.path.parent_path()).string();
  }
  return config::ConfigError(std::move(out));
}

json point_json(const Point& point) {
  return {{"index", point.index}, {"id", point.id}, {"values", point.values()}};
}

json with_status(json result, const Point& point, const EvaluateOptions& options, const std::string& status,
                 const std::string& reason) {
  result["point"] = point_json(point);
  result["mode"] = mode_name(options.mode);
  result["status"] = status;
  result["reason"] = reason;
  return result;
}

// The closed-form counterpart of the run report: its metrics and its FLOP totals under the same keys.
json analytic_report(const config::Scenario& s, const estimate::IterationTimeEstimate& e,
                     const WarningLog& warnings, const std::string& command_line) {
  json warning_list = json::array();
  for (const std::string& w : warnings.messages()) warning_list.push_back(w);
  json report = report::to_json(estimate::run_metrics(s, e));
  report.update({
      {"schema_version", 1},
      {"provenance",
       {{"tool", "trainsim"},
        {"version", version()},
        {"git_sha", git_sha()},
        {"command_line", command_line},
        {"inputs", report::scenario_inputs(s)},
        {"options", {{"network", "analytic"}}}}},
      {"scenario", s.name},
      {"analytic",
       {{"model_flops_per_iteration", e.model_flops},
        {"hardware_flops_per_iteration", e.hardware_flops},
        {"executed_flops_per_iteration", e.executed_flops}}},
      {"warnings", warning_list},
  });
  if (s.campaign.tokens > 0) {
    report["campaign"] = to_json(report::campaign_report(
        s, analytic::estimate_campaign(s, e.iteration_s, e.peak_host_bytes_per_node)));
  }
  return report;
}

}  // namespace

std::string mode_name(Mode mode) { return mode == Mode::kAnalytic ? "analytic" : "simulated"; }

std::string run_command(const SweepFile& sweep, const Point& point, const EvaluateOptions& options) {
  std::string out = "trainsim run " + sweep.base_text;
  for (const Setting& s : point.settings(sweep)) out += fmt::format(" --set {}={}", s.key, s.value);
  if (options.network == engine::NetworkModel::kIdeal) out += " --network ideal";
  if (options.full) out += " --full";
  if (options.all_traffic) out += " --all-traffic";
  return out + " --format json";
}

json failed_result(const Point& point, const EvaluateOptions& options, const std::string& reason) {
  return with_status(json::object(), point, options, "failed", reason);
}

json evaluate_point(const SweepFile& sweep, const Point& point, const EvaluateOptions& options) {
  config::Scenario scenario;
  try {
    scenario = load_point_scenario(sweep, point.settings(sweep));
  } catch (const config::ConfigError& e) {
    return with_status(json::object(), point, options, "invalid", relative_to_sweep(e, sweep).what());
  }
  const std::string command = run_command(sweep, point, options);
  try {
    json result;
    std::string why;
    if (options.mode == Mode::kAnalytic) {
      WarningLog warnings;
      const estimate::IterationTimeEstimate e = estimate::estimate_iteration_time(scenario, &warnings);
      result = analytic_report(scenario, e, warnings, command);
      why = report::infeasibility(result);
    } else {
      engine::RunOptions run_options;
      run_options.network = options.network;
      run_options.engine.full = options.full;
      run_options.engine.mirror =
          options.all_traffic ? engine::MirrorMode::kCoupled : engine::MirrorMode::kNone;
      const std::unique_ptr<engine::ScenarioRun> run = engine::run_scenario(scenario, run_options);
      const report::RunReport report = report::make_run_report(
          scenario, *run, {command, engine::to_string(options.network), options.full, 1});
      why = report::infeasibility(report.metrics.memory);
      result = to_json(report);
    }
    return with_status(std::move(result), point, options, why.empty() ? "ok" : "infeasible", why);
  } catch (const workload::PlanError& e) {
    return with_status(json{{"scenario", scenario.name}, {"gpus", scenario.cluster.gpus}}, point, options,
                       "invalid", e.what());
  } catch (const std::exception& e) {
    return with_status(json{{"scenario", scenario.name}, {"gpus", scenario.cluster.gpus}}, point, options,
                       "failed", e.what());
  }
}

}  // namespace trainsim::sweep
