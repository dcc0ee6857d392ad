// trainsim calibrate fit-stack STACK --cases PATH...: fits a stack profile's parameters on the
// single-node calibration cases that run on it and rewrites the profile (sim/validate/stack_fit.h).
#include <fstream>
#include <iostream>
#include <sstream>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "sim/common/atomic_file.h"
#include "sim/validate/stack_fit.h"
#include "tools/trainsim/cli.h"

namespace trainsim::cli {
namespace {

// Exit code of --check when the profile is not what the fit writes.
constexpr int kExitStale = 1;
// A single-node simulation longer than this is stopped and reported.
constexpr double kCaseTimeLimitS = 600;

struct FitStackArgs {
  std::filesystem::path stack;
  std::vector<std::filesystem::path> cases;
  std::vector<std::string> traces;  // SCENARIO=TRACE
  std::vector<std::string> fit;
  int jobs = 1;
  bool check = false;
};

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

int fit_stack_command(const FitStackArgs& args) {
  validate::StackFitRequest request;
  request.stack_file = args.stack;
  request.inputs = args.cases;
  for (const std::string& pair : args.traces) {
    const size_t eq = pair.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == pair.size()) {
      spdlog::error("--trace {}: expected SCENARIO=TRACE, the scenario of a profiled run and its trace",
                    pair);
      return kExitUsage;
    }
    request.traces.push_back({pair.substr(0, eq), pair.substr(eq + 1)});
    for (const std::filesystem::path& file : {request.traces.back().scenario, request.traces.back().trace}) {
      if (!std::filesystem::is_regular_file(file)) {
        spdlog::error("--trace {}: {} is not a file", pair, file.string());
        return kExitUsage;
      }
    }
  }
  request.jobs = args.jobs;
  request.time_limit_s = kCaseTimeLimitS;
  for (const std::string& name : args.fit) {
    const std::optional<config::StackParameter> p = config::parse_stack_parameter(name);
    if (!p) {
      std::vector<std::string> names;
      for (const config::StackParameterInfo& info : config::stack_parameter_table())
        names.emplace_back(info.name);
      spdlog::error("--fit {}: no such stack parameter; parameters: {}", name, fmt::join(names, ", "));
      return kExitUsage;
    }
    request.parameters.push_back(*p);
  }
  validate::StackFitResult result;
  try {
    result = validate::fit_stack(request);
  } catch (const validate::StackFitError& e) {
    spdlog::error("{}: {}", args.stack.string(), e.what());
    return kExitInvalidInput;
  }
  std::cout << validate::render_fit_table(request, result);
  const std::string text = validate::render_stack_profile(request, result);
  if (args.check) {
    if (text == read_text(args.stack)) {
      std::cout << fmt::format("# {} is what the fit writes\n", args.stack.string());
      return kExitOk;
    }
    spdlog::error("{} differs from what the fit writes: refit it with `{}` and review the diff",
                  args.stack.string(), validate::refit_command(request));
    return kExitStale;
  }
  write_file_atomically(args.stack, text);
  std::cout << fmt::format("# wrote {}\n", args.stack.string());
  return kExitOk;
}

}  // namespace

void register_fit_stack(CLI::App* calibrate, Context& context) {
  auto args = std::make_shared<FitStackArgs>();
  CLI::App* cmd = calibrate->add_subcommand(
      "fit-stack",
      "Fit a stack profile's parameters on single-node measurements of its stack and rewrite it");
  cmd->add_option("STACK", args->stack,
                  "The stack profile (a hardware profile that extends one, with a stack section)")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--cases", args->cases,
                  "Validation case files or folders of them (repeatable); the calibration cases that run on "
                  "STACK are fitted on (without --cases and --trace: what the profile's stack.fit lists)")
      ->check(CLI::ExistingPath);
  cmd->add_option(
      "--trace", args->traces,
      "SCENARIO=TRACE: a profiled run on one node (its scenario, on STACK, and the PyTorch profiler "
      "trace of one rank; repeatable): its step time and the GPU time of each kernel class taking "
      "at least 5 % of the step are fitted on");
  cmd->add_option("--fit", args->fit, "The parameters to fit (default: those the profile's stack.fit lists)")
      ->delimiter(',');
  add_jobs_option(cmd, args->jobs, "Simulations");
  cmd->add_flag("--check", args->check,
                "Refit and compare with the file instead of writing it (exit 1 when it differs)");
  cmd->footer(
      "Bounded least squares on the measurements' relative errors, from the neutral parameters, so the same "
      "inputs\n"
      "give the same file. Validation cases (multi-node, or declared) are never fitted on: those in a "
      "folder\n"
      "are listed as left out, one named on its own is refused. A parameter that ends on a bound or that no\n"
      "case moves is refused. Exits 3 on a refusal or invalid input (calibrate/README.md, \"Stack "
      "profiles\").");
  cmd->callback([args, &context] { context.exit_code = fit_stack_command(*args); });
}

}  // namespace trainsim::cli
