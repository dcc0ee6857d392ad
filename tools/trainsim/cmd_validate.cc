// trainsim validate [DIR]: runs the validation cases (published measurements) in parallel and
// reports the simulated value of each against the published one, the error statistics per suite,
// the shape checks and, with --gate, the CI thresholds.
#include <chrono>
#include <iostream>
#include <set>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "sim/common/atomic_file.h"
#include "sim/validate/accuracy.h"
#include "sim/validate/case_scenario.h"
#include "sim/validate/report.h"
#include "sim/validate/runner.h"
#include "tools/trainsim/cli.h"

namespace trainsim::cli {
namespace {

// Exit code when a gate is violated or a case produced no value.
constexpr int kExitValidationFailed = 1;
// No single case should take this long; one that does is stopped and reported.
constexpr double kCaseTimeLimitS = 900;

struct ValidateArgs {
  std::filesystem::path dir = "scenarios/validation";
  int jobs = 1;
  std::string format = "table";
  std::vector<std::string> suites;
  bool gate = false;
  bool hardware_only = true;
  std::filesystem::path write_accuracy;  // empty: not asked
  std::filesystem::path check_accuracy;
};

// A validated regime's errors that moved by more than this (a fraction) no longer match the shipped
// accuracy file: well above the drift of numerics, well below what a user reads in a percentage.
constexpr double kAccuracyTolerance = 0.005;

// --write-accuracy with the accuracy rows of the cases run, and --check-accuracy of them against
// `shipped` (the file's rows); the exit code.
int accuracy_file(const ValidateArgs& args, const std::vector<validate::AccuracyRow>& measured,
                  const std::vector<validate::AccuracyRow>& shipped) {
  if (!args.write_accuracy.empty()) {
    write_file_atomically(args.write_accuracy, validate::accuracy_yaml(measured));
    spdlog::info("wrote {} ({} regimes)", args.write_accuracy.string(), measured.size());
  }
  if (args.check_accuracy.empty()) return kExitOk;
  const std::vector<std::string> drift = validate::accuracy_drift(shipped, measured, kAccuracyTolerance);
  for (const std::string& d : drift) spdlog::error("{}: {}", args.check_accuracy.string(), d);
  if (drift.empty()) return kExitOk;
  spdlog::error(
      "{} no longer matches the validation (above); if the change is intended, regenerate it with "
      "trainsim validate {} --no-hardware-only --write-accuracy {} and commit it with the reason",
      args.check_accuracy.string(), args.dir.string(), args.check_accuracy.string());
  return kExitValidationFailed;
}

// Loads every case's scenario (and baseline) up front, so that all input errors are reported at
// once, before anything runs. Throws config::ConfigError.
void check_scenarios(const validate::ValidationSet& set) {
  std::vector<config::Diagnostic> diagnostics;
  for (const validate::Case& c : set.cases) {
    for (const validate::ScenarioRef* ref : {&c.scenario, c.baseline ? &*c.baseline : nullptr}) {
      if (ref == nullptr) continue;
      try {
        validate::load_case_scenario(*ref);
      } catch (const config::ConfigError& e) {
        diagnostics.insert(diagnostics.end(), e.diagnostics().begin(), e.diagnostics().end());
      }
    }
  }
  if (!diagnostics.empty()) throw config::ConfigError(std::move(diagnostics));
}

int validate_command(const ValidateArgs& args, const Context& context) {
  validate::ValidationSet set = validate::load_validation_set(args.dir);
  if (!args.suites.empty()) {
    std::set<std::string> known;
    for (const validate::Suite& s : set.suites) known.insert(s.name);
    for (const std::string& s : args.suites) {
      if (known.count(s) == 0) {
        spdlog::error("--suite {}: no such suite in {}; suites: {}", s, args.dir.string(),
                      fmt::join(known, ", "));
        return kExitUsage;
      }
    }
    const std::set<std::string> wanted(args.suites.begin(), args.suites.end());
    std::erase_if(set.cases, [&](const validate::Case& c) { return wanted.count(c.suite) == 0; });
    std::erase_if(set.suites, [&](const validate::Suite& s) { return wanted.count(s.name) == 0; });
  }
  check_scenarios(set);
  // Read before anything runs, so that a mistake in it is reported at once.
  const std::vector<validate::AccuracyRow> shipped = args.check_accuracy.empty()
                                                         ? std::vector<validate::AccuracyRow>()
                                                         : validate::load_accuracy(args.check_accuracy);

  spdlog::info("running {} validation cases, {} at a time", set.cases.size(), args.jobs);
  const auto start = std::chrono::steady_clock::now();
  size_t done = 0;
  validate::RunnerOptions options;
  options.jobs = args.jobs;
  options.time_limit_s = kCaseTimeLimitS;
  options.hardware_only = args.hardware_only;
  const std::vector<validate::CaseResult> results =
      validate::run_cases(set.cases, options, [&](size_t i, const validate::CaseResult& r) {
        ++done;
        if (r.ok) {
          spdlog::info("[{}/{}] {} ({:.1f} s)", done, set.cases.size(), set.cases[i].id,
                       r.measurement.wall_s);
        } else {
          spdlog::error("[{}/{}] {}: {}", done, set.cases.size(), set.cases[i].id, r.error);
        }
      });
  const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  const validate::ValidationReport report =
      validate::make_report(set, results, {context.command_line, args.jobs, wall_s, args.gate});
  print_result(args.format,
               {[&] { return json_text(to_json(report)); }, [&] { return validate::render_table(report); },
                [&] { return validate::render_csv(report); }});

  int rc = accuracy_file(args, validate::accuracy_rows(set, results), shipped);
  for (const validate::CaseOutcome& c : report.cases) {
    if (!c.simulated) rc = kExitValidationFailed;
  }
  if (args.gate) {
    for (const std::string& v : report.gate.violations) {
      spdlog::error("gate: {}", v);
      rc = kExitValidationFailed;
    }
  }
  return rc;
}

}  // namespace

void register_validate(CLI::App& app, Context& context) {
  auto args = std::make_shared<ValidateArgs>();
  CLI::App* cmd =
      app.add_subcommand("validate", "Reproduce published training measurements and report the error");
  cmd->add_option("DIR", args->dir, "A folder of validation cases (searched recursively) or one case file")
      ->capture_default_str();
  add_jobs_option(cmd, args->jobs, "Cases simulated");
  add_format_option(cmd, args->format, true);
  cmd->add_option("--suite", args->suites, "Only this suite (repeatable)");
  cmd->add_flag("--hardware-only,!--no-hardware-only", args->hardware_only,
                "Also run every case on a stack profile on the hardware profile beneath it (the hw.error "
                "column: what the stack's calibration buys)")
      ->capture_default_str();
  cmd->add_flag("--gate", args->gate,
                "Apply the CI thresholds of each suite that has a gate (median and per-case |error|)");
  cmd->add_option(
         "--write-accuracy", args->write_accuracy,
         "Write the validation cases' errors by framework, GPU and scale to FILE (what `trainsim run` "
         "quotes: scenarios/validation/accuracy.yaml)")
      ->excludes("--suite");
  cmd->add_option("--check-accuracy", args->check_accuracy,
                  "Exit 1 when FILE (an accuracy file) no longer matches the errors of this validation run, "
                  "naming each regime that moved")
      ->check(CLI::ExistingFile)
      ->excludes("--suite");
  cmd->footer(
      "Every case is a published measurement (scenarios/validation/README.md). Errors are relative:\n"
      "(simulated - published) / published. A case is a calibration case (one node, or role: calibration;\n"
      "stack profiles are fitted on these) or a validation case; statistics and gates count validation\n"
      "cases only. Exits 1 when a case produced no value (a validation case its stack was fitted on is\n"
      "refused) or, with --gate, when a gate is violated (each violation is named); 3 when a case file is\n"
      "invalid.");
  cmd->callback([args, &context] { context.exit_code = validate_command(*args, context); });
}

}  // namespace trainsim::cli
