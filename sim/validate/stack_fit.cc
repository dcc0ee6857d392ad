#include "sim/validate/stack_fit.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <optional>
#include <set>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "sim/common/isolated.h"
#include "sim/common/text_table.h"
#include "sim/common/version.h"
#include "sim/config/loader.h"
#include "sim/engine/scenario_run.h"
#include "sim/measured/kineto_trace.h"
#include "sim/report/compare.h"
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
struct Inputs {
  std::vector<fs::path> cases;
  std::vector<ProfiledRun> traces;
};

Inputs fit_inputs(const StackFitRequest& request, const config::StackProfile& stack) {
  if (!request.inputs.empty() || !request.traces.empty()) return {request.inputs, request.traces};
  Inputs out;
  const fs::path dir = request.stack_file.parent_path();
  if (stack.fit) {
    for (const std::string& input : stack.fit->inputs) out.cases.push_back((dir / input).lexically_normal());
    for (const auto& [scenario, trace] : stack.fit->traces) {
      out.traces.push_back({(dir / scenario).lexically_normal(), (dir / trace).lexically_normal()});
    }
  }
  if (out.cases.empty() && out.traces.empty()) {
    throw StackFitError(
        "name what to fit on (--cases FILE|DIR..., --trace SCENARIO=TRACE...); the profile's stack.fit lists "
        "nothing");
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

// A profiled run ready to fit on: its scenario, the rank its trace was taken on, and its targets
// with their measured values: the step (no class), then every compute class of at least kClassShare
// of the measured step.
struct Profiled {
  ProfiledRun input;
  config::Scenario scenario;
  int64_t rank = 0;
  std::vector<std::pair<std::optional<measured::ActivityClass>, double>> targets;
};

std::string target_name(const std::optional<measured::ActivityClass>& cls) {
  return cls ? std::string(measured::to_string(*cls)) : "step";
}

// A kernel class is fitted on when it takes at least this share of the measured step.
constexpr double kClassShare = 0.05;

std::vector<Profiled> profiled_runs(const std::vector<ProfiledRun>& inputs, const fs::path& stack_path) {
  std::vector<Profiled> out;
  for (const ProfiledRun& input : inputs) {
    Profiled p{input, config::load_scenario(input.scenario), 0, {}};
    if (fs::weakly_canonical(p.scenario.cluster.hardware_path) != stack_path) {
      throw StackFitError(fmt::format("the profiled run {} runs on {}, not on the stack profile being fitted",
                                      config::display_name(input.scenario),
                                      config::display_name(p.scenario.cluster.hardware_path)));
    }
    if (p.scenario.cluster.gpus > p.scenario.cluster.topology.node.gpus) {
      throw StackFitError(fmt::format(
          "the profiled run {} spans {} GPUs on nodes of {}: a stack is fitted on one node, multi-node runs "
          "are what it predicts (compare them with trainsim compare)",
          config::display_name(input.scenario), p.scenario.cluster.gpus,
          p.scenario.cluster.topology.node.gpus));
    }
    const measured::MeasuredTrace trace = measured::read_kineto_trace(input.trace);
    p.rank = trace.rank.value_or(0);
    const measured::StepProfile step = measured::mean_profile(trace.steps);
    p.targets.emplace_back(std::nullopt, step.step_s);
    for (const measured::ActivityClass cls :
         {measured::ActivityClass::kGemm, measured::ActivityClass::kAttention,
          measured::ActivityClass::kMemory, measured::ActivityClass::kOptimizer}) {
      const double t = step.of(cls).time_s;
      if (t >= kClassShare * step.step_s) p.targets.emplace_back(cls, t);
    }
    out.push_back(std::move(p));
  }
  return out;
}

// The simulated values of `run`'s targets with the stack at `parameters`. One simulation: call it in
// a child process.
nlohmann::json simulate_profiled(const Profiled& run, const config::StackParameters& parameters) {
  config::Scenario s = run.scenario;
  s.cluster.hardware.stack->parameters = parameters;
  engine::RunOptions options;
  options.engine.iterations = 2;  // the measured steps are steady ones
  const std::unique_ptr<engine::ScenarioRun> simulated = engine::run_scenario(s, options);
  const measured::StepProfile step = report::simulated_step(s, *simulated, run.rank);
  nlohmann::json out = nlohmann::json::array();
  for (const auto& [cls, measured] : run.targets) out.push_back(cls ? step.of(*cls).time_s : step.step_s);
  return out;
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
  const Inputs inputs = fit_inputs(request, stack);
  const fs::path stack_path = fs::weakly_canonical(request.stack_file);
  const std::vector<Case> cases = calibration_cases(inputs.cases, stack_path, out.left_out);
  const std::vector<Profiled> runs = profiled_runs(inputs.traces, stack_path);
  // What each simulation yields, in order: a case's value, or a profiled run's targets.
  std::vector<std::vector<size_t>> slots;  // per source (cases, then runs): its targets' indices
  for (const Case& c : cases) {
    slots.push_back({out.targets.size()});
    out.targets.push_back({c.id, c.file, std::string(to_string(c.metric)), c.published});
  }
  for (const Profiled& run : runs) {
    slots.emplace_back();
    for (const auto& [cls, measured] : run.targets) {
      const std::string what = target_name(cls);
      slots.back().push_back(out.targets.size());
      out.targets.push_back({fmt::format("{}:{}", run.input.trace.filename().string(), what), run.input.trace,
                             what + "_time_s", measured});
    }
  }
  if (out.targets.size() < params.size()) {
    throw StackFitError(fmt::format(
        "{} calibration measurement{} on this stack profile cannot determine {} parameter{}; add single-node "
        "measurements of the stack (--cases, --trace)",
        out.targets.size(), out.targets.size() == 1 ? "" : "s", params.size(),
        params.size() == 1 ? "" : "s"));
  }

  BoundedProblem problem;
  for (const StackParameter p : params) {
    const StackParameterInfo& info = config::info_of(p);
    problem.lower.push_back(info.lower);
    problem.upper.push_back(info.upper);
    problem.start.push_back(info.neutral);  // never the file's values: the fit depends on its inputs only
  }
  // The parameters not fitted keep the values the profile gives them, except those an earlier fit
  // set: nothing but that fit stands behind them.
  config::StackParameters base = stack.parameters;
  if (stack.fit) {
    for (const StackParameter p : stack.fit->parameters) base[p] = config::info_of(p).neutral;
  }
  stack.parameters = base;
  bool first = true;
  problem.residuals = [&](const std::vector<Vector>& points) {
    std::vector<Vector> residuals(points.size(), Vector(out.targets.size(), 0.0));
    const size_t n = slots.size();
    run_isolated(
        points.size() * n, {request.jobs, request.time_limit_s},
        [&](size_t task) {
          config::StackParameters trial = base;
          for (size_t j = 0; j < params.size(); ++j) trial[params[j]] = points[task / n][j];
          const size_t source = task % n;
          if (source < cases.size())
            return nlohmann::json::array({measure(cases[source], {false, trial}).simulated});
          return simulate_profiled(runs[source - cases.size()], trial);
        },
        [&](size_t task, IsolatedResult r) {
          const std::vector<size_t>& targets = slots[task % slots.size()];
          if (!r.ok || !r.value.is_array() || r.value.size() != targets.size()) {
            throw StackFitError(fmt::format("{} produced no value while fitting: {}",
                                            out.targets[targets.front()].id,
                                            r.ok ? "the measurement is not a number" : r.error));
          }
          for (size_t i = 0; i < targets.size(); ++i) {
            residuals[task / slots.size()][targets[i]] =
                relative_error(r.value[i].get<double>(), out.targets[targets[i]].published);
          }
        });
    if (first) out.residuals_before = residuals.front();
    first = false;
    return residuals;
  };
  out.solution = minimize_bounded(problem);
  const LeastSquaresResult& s = out.solution;

  // Refusals: a parameter the measurements do not move, then one the fit pushed to a bound.
  for (size_t j = 0; j < params.size(); ++j) {
    const StackParameterInfo& info = config::info_of(params[j]);
    double moved = 0;
    for (const Vector& row : s.jacobian)
      moved = std::max(moved, std::abs(row[j]) * (info.upper - info.lower));
    if (moved < 1e-4) {
      throw StackFitError(fmt::format(
          "{} does not move any of the {} measurements (at most {:.2g} of relative error across its whole "
          "range): they cannot determine it; fit it on measurements it matters to, or leave it out of --fit",
          info.name, out.targets.size(), moved));
    }
  }
  for (size_t j = 0; j < params.size(); ++j) {
    const StackParameterInfo& info = config::info_of(params[j]);
    const double margin = 1e-3 * (info.upper - info.lower);
    if (s.x[j] <= info.lower + margin || s.x[j] >= info.upper - margin) {
      throw StackFitError(fmt::format(
          "{} ends on its bound ({}, allowed {} to {}) with an rms residual of {:.2f}%: no physical value of "
          "it reproduces these measurements, so the model lacks a mechanism (or they disagree); find it "
          "rather than widen the bound",
          info.name, parameter_value(info, s.x[j]), parameter_value(info, info.lower),
          parameter_value(info, info.upper), 100 * rms(s.residuals)));
    }
  }

  // The record.
  const fs::path dir = stack_path.parent_path();
  const auto relative = [&](const fs::path& path) {
    return fs::weakly_canonical(path).lexically_relative(dir).generic_string();
  };
  config::StackFit fit;
  fit.parameters = params;
  for (const fs::path& input : inputs.cases) fit.inputs.push_back(relative(input));
  for (const ProfiledRun& run : inputs.traces)
    fit.traces.emplace_back(relative(run.scenario), relative(run.trace));
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
    const FitTarget& t = out.targets[i];
    fit.measurements.push_back(
        {t.id, relative(t.file), t.metric, t.published, t.published * (1 + s.residuals[i]), s.residuals[i]});
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
  if (!inputs.empty()) out += fmt::format("    inputs: [{}]\n", fmt::join(inputs, ", "));
  if (!fit.traces.empty()) {
    out += "    traces:\n";
    for (const auto& [scenario, trace] : fit.traces) {
      out += fmt::format("      - {{scenario: {}, trace: {}}}\n", scalar(scenario), scalar(trace));
    }
  }
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
      "# stack profile {} (on {}), fitted on {} calibration measurement{}: {} evaluations, {} iterations{}\n",
      result.profile.name, stack.hardware_name, result.targets.size(), result.targets.size() == 1 ? "" : "s",
      result.solution.evaluations, result.solution.iterations,
      result.solution.converged ? "" : " (not converged)");
  using Align = TextTable::Align;
  TextTable parameters({{"# parameter", Align::kLeft, 28},
                        {"value", Align::kRight, 10},
                        {"bounds", Align::kRight, 20},
                        {"std. error", Align::kRight, 12},
                        {"rms +/-1%", Align::kRight, 14}});
  for (const StackParameter p : fit.parameters) {
    const StackParameterInfo& info = config::info_of(p);
    const auto u = fit.uncertainty.find(p);
    parameters.add_row(
        {std::string(info.name), parameter_value(info, stack.parameters[p]),
         fmt::format("[{}, {}]", parameter_value(info, info.lower), parameter_value(info, info.upper)),
         u == fit.uncertainty.end() ? std::string("-") : parameter_value(info, u->second),
         fmt::format("+{:.3f} pt", 100 * fit.sensitivity.at(p))});
  }
  out += parameters.render();
  TextTable cases({{"# case", Align::kLeft, 48},
                   {"metric", Align::kLeft, 16},
                   {"published", Align::kRight, 12},
                   {"before fit", Align::kRight, 12},
                   {"fitted", Align::kRight, 12},
                   {"residual", Align::kRight, 10}});
  for (size_t i = 0; i < fit.measurements.size(); ++i) {
    const config::StackFitMeasurement& m = fit.measurements[i];
    cases.add_row({m.id, m.metric, fmt::format("{:.6g}", m.published),
                   fmt::format("{:+.1f}%", 100 * result.residuals_before[i]),
                   fmt::format("{:.6g}", m.simulated), fmt::format("{:+.2f}%", 100 * m.residual)});
  }
  out += "\n" + cases.render();
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
