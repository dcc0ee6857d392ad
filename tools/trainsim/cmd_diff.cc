// trainsim diff A B: two scenarios (simulated here) or two run reports (`run --format json`), or one
// of each, or two cluster reports (`cluster --format json`), or two validation reports (`validate
// --format json`), or two sweeps' results (`sweep --out DIR`), side by side: every input that differs
// and every metric that moved.
#include <array>
#include <filesystem>
#include <fstream>
#include <iostream>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include "sim/analytic/memory_bound.h"
#include "sim/common/isolated.h"
#include "sim/engine/scenario_run.h"
#include "sim/report/diff.h"
#include "sim/report/run_report.h"
#include "tools/trainsim/cli.h"

namespace trainsim::cli {
namespace {

struct DiffArgs {
  ScenarioArgs a, b;
  std::string format = "table";
  std::string network = "simgrid";
  bool full = false;
  bool exit_code = false;
  double tolerance = 1e-9;
};

// Why a side cannot be compared; thrown with the exit code it maps to.
struct SideError {
  int exit_code;
  std::string message;
};

// One side: its label, its report, and its scenario when it was one.
struct Side {
  std::string label;
  nlohmann::json report;
  std::optional<config::Scenario> scenario;
};

bool is_report_file(const std::filesystem::path& file) { return file.extension() == ".json"; }

// A sweep's results: its output folder (`trainsim sweep --out DIR`) or the results.jsonl in it.
bool is_sweep_results_file(const std::filesystem::path& file) {
  return file.extension() == ".jsonl" || std::filesystem::is_directory(file);
}

// What a report is the result of: "run", "cluster", "validate" or "sweep"; empty when none.
std::string kind_of(const nlohmann::json& report) {
  if (report::is_sweep_results(report)) return "sweep";
  if (report::is_cluster_report(report)) return "cluster";
  if (report::is_validation_report(report)) return "validate";
  return report.contains("iteration_time_s") ? "run" : "";
}

nlohmann::json read_report(const std::filesystem::path& file) {
  std::ifstream in(file);
  if (!in) throw SideError{kExitInvalidInput, fmt::format("{}: cannot open it", file.string())};
  nlohmann::json report = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (report.is_discarded()) {
    throw SideError{kExitInvalidInput, fmt::format("{}: not valid JSON; pass a run report (`trainsim run "
                                                   "--format json > FILE.json`) or a scenario YAML",
                                                   file.string())};
  }
  if (!report.is_object() || !report.contains("schema_version") || kind_of(report).empty()) {
    throw SideError{
        kExitInvalidInput,
        fmt::format("{}: not a run report (no iteration_time_s or schema_version), nor a cluster or "
                    "validation report; pass what `trainsim run`, `cluster` or `validate` write with "
                    "--format json, or a scenario YAML",
                    file.string())};
  }
  return report;
}

// The points of a sweep's results, one JSON object per line of its results.jsonl, as one array.
nlohmann::json read_sweep_results(const std::filesystem::path& file) {
  const std::filesystem::path jsonl = std::filesystem::is_directory(file) ? file / "results.jsonl" : file;
  std::ifstream in(jsonl);
  if (!in) {
    throw SideError{kExitInvalidInput,
                    fmt::format("{}: cannot open it; pass the folder `trainsim sweep --out DIR` wrote, or "
                                "the results.jsonl in it",
                                jsonl.string())};
  }
  nlohmann::json points = nlohmann::json::array();
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (line.empty()) continue;
    nlohmann::json point = nlohmann::json::array();
    point.push_back(nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false));
    if (!report::is_sweep_results(point)) {
      throw SideError{kExitInvalidInput,
                      fmt::format("{}:{}: not a sweep point's result (a JSON object with its point and "
                                  "status, as `trainsim sweep` writes one per line)",
                                  jsonl.string(), number)};
    }
    points.push_back(std::move(point[0]));
  }
  return points;
}

// Whether `file` is a cluster file (one that does not read is left to the scenario loader's errors).
bool is_cluster_file(const std::filesystem::path& file) {
  try {
    return config::detect_file_kind(file) == config::FileKind::kCluster;
  } catch (const config::ConfigError&) {
    return false;
  }
}

// Reads a side: a run report as it is, a scenario loaded and checked (its report is simulated later).
Side load_side(const char* name, const ScenarioArgs& side) {
  const std::string label = side.overrides.empty() ? side.file.string()
                                                   : fmt::format("{} --set {}", side.file.string(),
                                                                 fmt::join(side.overrides, " --set "));
  const bool sweep = is_sweep_results_file(side.file);
  if (is_report_file(side.file) || sweep) {
    if (!side.overrides.empty()) {
      throw SideError{kExitUsage,
                      fmt::format("--set-{}: {} is {}; --set applies to scenarios", name, side.file.string(),
                                  sweep ? "a sweep's results" : "a run report")};
    }
    return {label, sweep ? read_sweep_results(side.file) : read_report(side.file), std::nullopt};
  }
  if (is_cluster_file(side.file)) {
    throw SideError{kExitUsage,
                    fmt::format("{}: a cluster file; diff what `trainsim cluster {} --format json` "
                                "writes (both sides cluster reports)",
                                side.file.string(), side.file.string())};
  }
  config::Scenario s = side.load();
  if (const std::string why = analytic::memory_bound_refusal(s); !why.empty()) {
    throw SideError{kExitInfeasible, fmt::format("{}: infeasible plan: {}", name, why)};
  }
  return {label, nullptr, std::move(s)};
}

// Simulates the scenario sides, at once, each in its own process (SimGrid runs one simulation per
// process).
void simulate(std::array<Side*, 2> sides, const DiffArgs& args, const Context& context) {
  std::vector<Side*> pending;
  for (Side* side : sides) {
    if (side->scenario) pending.push_back(side);
  }
  if (pending.empty()) return;  // two run reports: nothing to simulate
  IsolatedOptions options;
  options.jobs = static_cast<int>(pending.size());
  std::string failure;
  run_isolated(
      pending.size(), options,
      [&](size_t i) {
        const config::Scenario& s = *pending[i]->scenario;
        engine::RunOptions run_options;
        run_options.engine.full = args.full;
        run_options.network = engine::network_model(args.network);
        spdlog::info("simulating {} on {} GPUs", pending[i]->label, s.cluster.gpus);
        const std::unique_ptr<engine::ScenarioRun> run = engine::run_scenario(s, run_options);
        return to_json(report::make_run_report(s, *run, {context.command_line, args.network, args.full, 1}));
      },
      [&](size_t i, IsolatedResult result) {
        if (result.ok) {
          pending[i]->report = std::move(result.value);
        } else if (failure.empty()) {
          failure = fmt::format("{}: {}", pending[i]->label, result.error);
        }
      });
  if (!failure.empty()) throw SideError{kExitInfeasible, failure};
}

int diff(const DiffArgs& args, const Context& context) {
  Side a, b;
  try {
    a = load_side("a", args.a);
    b = load_side("b", args.b);
    simulate({&a, &b}, args, context);
  } catch (const SideError& e) {
    spdlog::error("{}", e.message);
    return e.exit_code;
  }
  const std::string kind = kind_of(a.report);
  if (kind != kind_of(b.report)) {
    spdlog::error("{} is the report of `trainsim {}` and {} of `trainsim {}`: diff two of the same kind",
                  a.label, kind, b.label, kind_of(b.report));
    return kExitUsage;
  }
  std::vector<report::InputDifference> inputs;
  std::vector<report::MetricChange> metrics;
  if (kind == "sweep") {
    inputs = report::sweep_input_differences(a.report, b.report);
    metrics = report::sweep_metric_changes(a.report, b.report, args.tolerance);
  } else if (kind == "cluster") {
    inputs = report::cluster_input_differences(a.report, b.report);
    metrics = report::cluster_metric_changes(a.report, b.report, args.tolerance);
  } else if (kind == "validate") {
    inputs = report::validation_input_differences(a.report, b.report);
    metrics = report::validation_metric_changes(a.report, b.report, args.tolerance);
  } else {
    inputs = a.scenario && b.scenario ? report::scenario_differences(*a.scenario, *b.scenario,
                                                                     std::filesystem::current_path().string())
                                      : report::report_input_differences(a.report, b.report);
    metrics = report::metric_changes(a.report, b.report, args.tolerance);
  }
  const nlohmann::json result = report::diff_json(a.label, b.label, inputs, metrics);
  print_result(args.format,
               {[&] { return json_text(result); }, [&] { return report::render_diff_table(result); }});
  return args.exit_code && (!inputs.empty() || !metrics.empty()) ? kExitDiffers : kExitOk;
}

}  // namespace

void register_diff(CLI::App& app, Context& context) {
  auto args = std::make_shared<DiffArgs>();
  CLI::App* cmd = app.add_subcommand(
      "diff",
      "Two scenarios, or two run, cluster or validation reports, or two sweeps' results, side by side: "
      "every input that differs, every metric that moved");
  cmd->add_option("A", args->a.file,
                  "Scenario YAML, a report (`trainsim run|cluster|validate --format json`, .json), or a "
                  "sweep's results (the folder `trainsim sweep --out` wrote, or its results.jsonl)")
      ->required();
  cmd->add_option("B", args->b.file, "The other scenario or report (may be A's file with --set-b)")
      ->required();
  cmd->add_option("--set-a", args->a.overrides, "Override a key of scenario A (repeatable)")
      ->type_name("KEY=VALUE");
  cmd->add_option("--set-b", args->b.overrides, "Override a key of scenario B (repeatable)")
      ->type_name("KEY=VALUE");
  add_format_option(cmd, args->format, false);
  cmd->add_option("--network", args->network, "Network model for the scenarios simulated here")
      ->check(CLI::IsMember({"simgrid", "ideal"}))
      ->capture_default_str();
  cmd->add_flag("--full", args->full,
                "Simulate every rank of the scenarios instead of one per symmetry class");
  cmd->add_flag("--exit-code", args->exit_code,
                "Exit 1 when an input differs or a metric moved, 0 when none did (as git diff --exit-code)");
  cmd->add_option("--tolerance", args->tolerance,
                  "Relative change below which a metric has not moved (of the larger magnitude)")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  cmd->callback([args, &context] { context.exit_code = diff(*args, context); });
}

}  // namespace trainsim::cli
