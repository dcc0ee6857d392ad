#include "sim/validate/stack_fit.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <set>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "sim/common/isolated.h"
#include "sim/common/version.h"
#include "sim/config/loader.h"
#include "sim/validate/case_scenario.h"
#include "sim/validate/metrics.h"
#include "sim/validate/statistics.h"

namespace trainsim::validate {
namespace {

namespace fs = std::filesystem;
using config::StackParameter;
using config::StackParameterInfo;

// The fitted parameters, in table order without repeats.
std::vector<StackParameter> fitted_parameters(const StackFitRequest& request,
                                              const config::StackProfile& stack) {
  std::vector<StackParameter> asked = request.parameters;
  if (asked.empty() && stack.fit) asked = stack.fit->parameters;
  if (asked.empty()) {
    throw StackFitError(
        "name the parameters to fit (--fit gemm_fraction,memory_fraction,...); the profile's stack.fit "
        "lists none");
  }
  std::set<StackParameter> unique(asked.begin(), asked.end());
  for (const StackParameter p : unique) {
    if (!config::info_of(p).single_node) {
      throw StackFitError(fmt::format("{} cannot be fitted: {}; cite it in the profile instead",
                                      config::info_of(p).name, config::info_of(p).meaning));
    }
  }
  return {unique.begin(), unique.end()};
}

// The inputs of the fit: the request's, or those the profile records (relative to it).
std::vector<fs::path> fit_inputs(const StackFitRequest& request, const config::StackProfile& stack) {
  if (!request.inputs.empty()) return request.inputs;
  std::vector<fs::path> out;
  if (stack.fit) {
    for (const std::string& input : stack.fit->inputs) {
      out.push_back((request.stack_file.parent_path() / input).lexically_normal());
    }
  }
  if (out.empty()) {
    throw StackFitError("name the cases to fit on (--cases FILE|DIR...); the profile's stack.fit lists none");
  }
  return out;
}

// The calibration cases of `inputs` that run on the stack profile at `stack_path`.
std::vector<Case> calibration_cases(const std::vector<fs::path>& inputs, const fs::path& stack_path,
                                    std::vector<std::string>& left_out) {
  std::map<std::string, Case> chosen;       // by id: sorted, and a case reached twice counts once
  std::map<std::string, size_t> elsewhere;  // left out because they run on another profile
  for (const fs::path& input : inputs) {
    const bool named = fs::is_regular_file(input);
    const ValidationSet set = load_validation_set(input);
    for (const Case& c : set.cases) {
      const config::Scenario s = load_case_scenario(c.scenario);
      if (fs::weakly_canonical(s.cluster.hardware_path) != stack_path) {
        if (named) {
          throw StackFitError(fmt::format("case {} runs on {}, not on the stack profile being fitted", c.id,
                                          config::display_name(s.cluster.hardware_path)));
        }
        ++elsewhere[s.cluster.hardware.name];
        continue;
      }
      std::string why;
      if (!timed(c.metric)) {
        why = fmt::format("its metric {} does not depend on how fast the stack runs", to_string(c.metric));
      } else if (!is_scored(c)) {
        why = "not a confirmed measurement (a bound, or unconfirmed)";
      } else if (role_of(c, s) == Role::kValidation) {
        why = fmt::format(
            "a validation case ({} GPUs on nodes of {}{}): multi-node runs are predicted, never fitted on",
            s.cluster.gpus, s.cluster.topology.node.gpus, c.role ? ", declared" : "");
        if (named) throw StackFitError(fmt::format("case {} refused: {}", c.id, why));
      }
      if (!why.empty()) {
        left_out.push_back(fmt::format("{}: {}", c.id, why));
        continue;
      }
      chosen.emplace(c.id, c);
    }
  }
  for (const auto& [profile, count] : elsewhere) {
    left_out.push_back(fmt::format("{} case{} on profile {}", count, count == 1 ? "" : "s", profile));
  }
  std::vector<Case> out;
  for (auto& [id, c] : chosen) out.push_back(std::move(c));
  return out;
}

// rms of `r`.
double rms(const Vector& r) {
  double s = 0;
  for (const double v : r) s += v * v;
  return r.empty() ? 0 : std::sqrt(s / static_cast<double>(r.size()));
}

std::string number(double v) { return fmt::format("{:.6g}", v); }

// A YAML scalar for `text`, quoted when it needs to be.
std::string scalar(const std::string& text) {
  YAML::Emitter e;
  e << text;
  return e.c_str();
}

std::string parameter_value(const StackParameterInfo& info, double v) {
  return info.duration ? fmt::format("{:.4g}us", v * 1e6) : fmt::format("{:.4g}", v);
}

}  // namespace

std::string refit_command(const StackFitRequest& request) {
  return "trainsim calibrate fit-stack " + request.stack_file.string();
}

StackFitResult fit_stack(const StackFitRequest& request) {
  StackFitResult out;
  out.profile = config::load_hardware(request.stack_file);
  if (!out.profile.stack) {
    throw StackFitError(fmt::format(
        "{} is a hardware profile, not a stack profile: a stack profile extends one and adds a stack section "
        "(calibrate/README.md, \"Stack profiles\")",
        config::display_name(request.stack_file)));
  }
  config::StackProfile& stack = *out.profile.stack;
  const std::vector<StackParameter> params = fitted_parameters(request, stack);
  const std::vector<fs::path> inputs = fit_inputs(request, stack);
  out.cases = calibration_cases(inputs, fs::weakly_canonical(request.stack_file), out.left_out);
  if (out.cases.size() < params.size()) {
    throw StackFitError(fmt::format(
        "{} calibration case{} on this stack profile cannot determine {} parameter{}; add single-node "
        "measurements of the stack (--cases)",
        out.cases.size(), out.cases.size() == 1 ? "" : "s", params.size(), params.size() == 1 ? "" : "s"));
  }

  BoundedProblem problem;
  for (const StackParameter p : params) {
    const StackParameterInfo& info = config::info_of(p);
    problem.lower.push_back(info.lower);
    problem.upper.push_back(info.upper);
    problem.start.push_back(info.neutral);  // never the file's values: the fit depends on its inputs only
  }
  const config::StackParameters base = stack.parameters;
  bool first = true;
  problem.residuals = [&](const std::vector<Vector>& points) {
    std::vector<Vector> residuals(points.size(), Vector(out.cases.size(), 0.0));
    const size_t n = out.cases.size();
    run_isolated(
        points.size() * n, {request.jobs, request.time_limit_s},
        [&](size_t task) {
          Variant variant;
          variant.stack = base;
          for (size_t j = 0; j < params.size(); ++j) (*variant.stack)[params[j]] = points[task / n][j];
          return measure(out.cases[task % n], variant).at("simulated");
        },
        [&](size_t task, IsolatedResult r) {
          const Case& c = out.cases[task % n];
          if (!r.ok || !r.value.is_number()) {
            throw StackFitError(fmt::format("case {} produced no value while fitting: {}", c.id,
                                            r.ok ? "the measurement is not a number" : r.error));
          }
          residuals[task / n][task % n] = relative_error(r.value.get<double>(), c.published);
        });
    if (first) out.residuals_before = residuals.front();
    first = false;
    return residuals;
  };
  out.solution = minimize_bounded(problem);
  const LeastSquaresResult& s = out.solution;

  // Refusals: a parameter the cases do not move, or one the fit pushed to a bound.
  for (size_t j = 0; j < params.size(); ++j) {
    const StackParameterInfo& info = config::info_of(params[j]);
    double moved = 0;
    for (const Vector& row : s.jacobian)
      moved = std::max(moved, std::abs(row[j]) * (info.upper - info.lower));
    if (moved < 1e-4) {
      throw StackFitError(fmt::format(
          "{} does not move any of the {} cases (at most {:.2g} of relative error across its whole range): "
          "they cannot determine it; fit it on cases it matters to, or leave it out of --fit",
          info.name, out.cases.size(), moved));
    }
    const double margin = 1e-3 * (info.upper - info.lower);
    if (s.x[j] <= info.lower + margin || s.x[j] >= info.upper - margin) {
      throw StackFitError(fmt::format(
          "{} ends on its bound ({}, allowed {} to {}) with an rms residual of {:.2f}%: no physical value of "
          "it reproduces these cases, so the model lacks a mechanism (or the cases disagree); find it rather "
          "than widen the bound",
          info.name, parameter_value(info, s.x[j]), parameter_value(info, info.lower),
          parameter_value(info, info.upper), 100 * rms(s.residuals)));
    }
  }

  // The record.
  const fs::path dir = fs::weakly_canonical(request.stack_file).parent_path();
  config::StackFit fit;
  fit.parameters = params;
  for (const fs::path& input : inputs) {
    fit.inputs.push_back(fs::weakly_canonical(input).lexically_relative(dir).generic_string());
  }
  fit.command = refit_command(request);
  fit.tool_version = version();
  fit.rms_residual = rms(s.residuals);
  const size_t n = s.residuals.size();
  const size_t p = params.size();
  // One standard error: sqrt(diag((J^T J)^-1) * SS / (n - p)).
  if (n > p) {
    std::vector<Vector> jtj(p, Vector(p, 0.0));
    for (const Vector& row : s.jacobian) {
      for (size_t a = 0; a < p; ++a) {
        for (size_t b = 0; b < p; ++b) jtj[a][b] += row[a] * row[b];
      }
    }
    const double variance = s.sum_of_squares / static_cast<double>(n - p);
    for (size_t j = 0; j < p; ++j) {
      Vector unit(p, 0.0);
      unit[j] = 1;
      const Vector column = solve_spd(jtj, unit);
      if (!column.empty() && column[j] > 0) fit.uncertainty[params[j]] = std::sqrt(column[j] * variance);
    }
  }
  // How much the rms residual grows when a parameter moves 1 % either way (first order).
  for (size_t j = 0; j < p; ++j) {
    double worst = 0;
    for (const double sign : {-1.0, 1.0}) {
      Vector r = s.residuals;
      for (size_t i = 0; i < n; ++i) r[i] += sign * 0.01 * s.x[j] * s.jacobian[i][j];
      worst = std::max(worst, rms(r) - fit.rms_residual);
    }
    fit.sensitivity[params[j]] = worst;
  }
  for (size_t i = 0; i < n; ++i) {
    const Case& c = out.cases[i];
    fit.measurements.push_back({c.id, fs::weakly_canonical(c.file).lexically_relative(dir).generic_string(),
                                std::string(to_string(c.metric)), c.published,
                                c.published * (1 + s.residuals[i]), s.residuals[i]});
  }
  for (size_t j = 0; j < p; ++j) stack.parameters[params[j]] = s.x[j];
  stack.fit = std::move(fit);
  return out;
}

std::string render_stack_profile(const StackFitRequest& request, const StackFitResult& result) {
  const YAML::Node file = YAML::LoadFile(request.stack_file.string());
  const config::StackProfile& stack = *result.profile.stack;
  const config::StackFit& fit = *stack.fit;
  std::string out;
  // The file's own leading comment block, kept.
  {
    std::ifstream in(request.stack_file);
    std::string line;
    while (std::getline(in, line) && !line.empty() && line.front() == '#') out += line + "\n";
  }
  out += "schema_version: 1\n";
  out += fmt::format("extends: {}\n", scalar(file["extends"].as<std::string>()));
  out += fmt::format("name: {}\n", scalar(result.profile.name));
  out += "stack:\n";
  out += fmt::format("  framework: {}\n", scalar(stack.framework));
  if (!stack.description.empty()) out += fmt::format("  description: {}\n", scalar(stack.description));
  out += "  parameters:\n";
  for (const StackParameterInfo& info : config::stack_parameter_table()) {
    const double v = stack.parameters[info.id];
    const bool is_fitted = std::ranges::count(fit.parameters, info.id) > 0;
    if (is_fitted || v != info.neutral)
      out += fmt::format("    {}: {}\n", info.name, parameter_value(info, v));
  }
  out += "  fit:\n";
  out += fmt::format("    command: {}\n", scalar(fit.command));
  out += fmt::format("    tool_version: {}\n", scalar(fit.tool_version));
  std::vector<std::string> names;
  for (const StackParameter p : fit.parameters) names.emplace_back(config::info_of(p).name);
  out += fmt::format("    parameters: [{}]\n", fmt::join(names, ", "));
  std::vector<std::string> inputs;
  for (const std::string& input : fit.inputs) inputs.push_back(scalar(input));
  out += fmt::format("    inputs: [{}]\n", fmt::join(inputs, ", "));
  out += fmt::format("    rms_residual: {}\n", number(fit.rms_residual));
  for (const auto& [key, values] :
       {std::pair{"uncertainty", &fit.uncertainty}, std::pair{"sensitivity", &fit.sensitivity}}) {
    if (values->empty()) continue;
    std::vector<std::string> items;
    for (const auto& [p, v] : *values)
      items.push_back(fmt::format("{}: {}", config::info_of(p).name, number(v)));
    out += fmt::format("    {}: {{{}}}\n", key, fmt::join(items, ", "));
  }
  out += "    measurements:\n";
  for (const config::StackFitMeasurement& m : fit.measurements) {
    out += fmt::format(
        "      - {{id: {}, file: {}, metric: {}, published: {}, simulated: {}, residual: {}}}\n",
        scalar(m.id), scalar(m.file), m.metric, number(m.published), number(m.simulated), number(m.residual));
  }
  // Sources: the file's own, with the stack's entry written here.
  std::map<std::string, std::string> sources;
  if (file["sources"].IsMap()) {
    for (auto it = file["sources"].begin(); it != file["sources"].end(); ++it) {
      sources[it->first.Scalar()] = it->second.Scalar();
    }
  }
  sources["stack"] =
      "the stack as its description names it; the parameters under stack.fit.parameters fitted by trainsim "
      "calibrate fit-stack on the single-node measurements under stack.fit.measurements (the others at the "
      "values their own sources give, or neutral)";
  out += "sources:\n";
  for (const auto& [key, citation] : sources) out += fmt::format("  {}: {}\n", key, scalar(citation));
  return out;
}

std::string render_fit_table(const StackFitRequest& request, const StackFitResult& result) {
  const config::StackProfile& stack = *result.profile.stack;
  const config::StackFit& fit = *stack.fit;
  std::string out = fmt::format(
      "# stack profile {} (on {}), fitted on {} calibration case{}: {} evaluations, {} iterations{}\n",
      result.profile.name, stack.hardware_name, result.cases.size(), result.cases.size() == 1 ? "" : "s",
      result.solution.evaluations, result.solution.iterations,
      result.solution.converged ? "" : " (not converged)");
  out += fmt::format("{:<28} {:>10} {:>20} {:>12} {:>14}\n", "# parameter", "value", "bounds", "std. error",
                     "rms +/-1%");
  for (const StackParameter p : fit.parameters) {
    const StackParameterInfo& info = config::info_of(p);
    const auto u = fit.uncertainty.find(p);
    out += fmt::format(
        "{:<28} {:>10} {:>20} {:>12} {:>14}\n", info.name, parameter_value(info, stack.parameters[p]),
        fmt::format("[{}, {}]", parameter_value(info, info.lower), parameter_value(info, info.upper)),
        u == fit.uncertainty.end() ? std::string("-") : parameter_value(info, u->second),
        fmt::format("+{:.3f} pt", 100 * fit.sensitivity.at(p)));
  }
  out += fmt::format("\n{:<48} {:<16} {:>12} {:>12} {:>12} {:>10}\n", "# case", "metric", "published",
                     "before fit", "fitted", "residual");
  for (size_t i = 0; i < fit.measurements.size(); ++i) {
    const config::StackFitMeasurement& m = fit.measurements[i];
    out += fmt::format("{:<48} {:<16} {:>12.6g} {:>+11.1f}% {:>12.6g} {:>+9.2f}%\n", m.id, m.metric,
                       m.published, 100 * result.residuals_before[i], m.simulated, 100 * m.residual);
  }
  out += fmt::format("rms residual {:.2f}% (before the fit: {:.2f}%)\n", 100 * fit.rms_residual,
                     100 * rms(result.residuals_before));
  if (!result.left_out.empty()) {
    out += "\n# left out\n";
    for (const std::string& why : result.left_out) out += "  " + why + "\n";
  }
  out += fmt::format("\nrefit: {}\n", refit_command(request));
  return out;
}

}  // namespace trainsim::validate
