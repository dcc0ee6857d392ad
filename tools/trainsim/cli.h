// Shared pieces of the trainsim command line: exit codes, global options and the registration
// function of each subcommand (one file per subcommand, cmd_<name>.cc).
#ifndef TRAINSIM_TOOLS_TRAINSIM_CLI_H_
#define TRAINSIM_TOOLS_TRAINSIM_CLI_H_

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

#include "sim/common/atomic_file.h"
#include "sim/config/loader.h"

namespace trainsim::cli {

// Documented exit codes (README "Exit codes").
enum ExitCode : int {
  kExitOk = 0,
  kExitDiffers = 1,       // diff --exit-code: an input differs or a metric moved (as git diff --exit-code)
  kExitUsage = 2,         // bad command line
  kExitInvalidInput = 3,  // an input file (or --set) is invalid
  kExitInfeasible = 4,    // the plan does not fit (memory) or cannot run
  kExitBudget = 5,        // run --max-events/--time-limit stopped the simulation before its end
  kExitInternal = 70,     // a bug: an invariant failed
};

// State shared by all subcommands. A subcommand's callback stores its exit code here.
struct Context {
  int exit_code = kExitOk;
  std::string command_line;  // as typed, for provenance blocks
};

// Whether `file` is a validation case (its own top level names `validation`). A file that does not
// read as YAML is not: the scenario loader's errors then say what is wrong with it.
bool is_validation_case(const std::filesystem::path& file);

// Arguments of every subcommand that takes one scenario: the file and `--set` overrides.
struct ScenarioArgs {
  std::filesystem::path file;
  std::vector<std::string> overrides;

  // Registers SCENARIO (positional, required) and --set on `cmd`.
  void add_to(CLI::App* cmd);
  // Loads the scenario with the overrides; a validation case's file gives the scenario the case runs
  // (its scenario file with the case's `set`, the overrides on top). Throws config::ConfigError.
  config::Scenario load() const;
};

// Opens `out` on `path` (nothing when `path` is empty) before any work, so that an unwritable
// destination fails first. Returns false after logging "<option>: <why>" when it cannot.
bool open_output(const std::filesystem::path& path, std::string_view option, std::optional<AtomicFile>& out);

// The exit code of a finished run whose plan does not fit for the reason `why` (empty: it fits):
// kExitInfeasible after logging it, or kExitOk after a warning when `ignore_memory`.
int fit_exit_code(const std::string& why, bool ignore_memory);

// The machine's cores: what -j,--jobs defaults to in every subcommand that has it.
int all_cores();
// -j,--jobs on `cmd`: how many `what` run at once, each in its own process (1 to 4096; default all
// cores).
void add_jobs_option(CLI::App* cmd, int& jobs, std::string_view what);
// A command's result in each output format it offers, for print_result: its JSON document, its
// table and, where the command has a row form, its CSV, each rendered only when asked for.
struct Renderings {
  std::function<std::string()> json;
  std::function<std::string()> table;
  std::function<std::string()> csv = nullptr;  // none: the command has no CSV form
};
// A JSON document as every command prints it: indented by 2, with a final newline.
template <class Json>
std::string json_text(const Json& document) {
  return document.dump(2) + "\n";
}
// --format on `cmd`: table (the default) or json, and csv when `csv`.
void add_format_option(CLI::App* cmd, std::string& format, bool csv);
// Writes `result` to stdout in `format` (one add_format_option accepted).
void print_result(std::string_view format, const Renderings& result);

// Whether --all-traffic is asked for on the ideal network, where it would change nothing; logs why
// it is refused.
bool refuse_all_traffic(bool all_traffic, const std::string& network);

// Configures the stderr logger: -1 errors only, 0 warnings and info, 1 debug, 2+ trace. The level
// can also come from SPDLOG_LEVEL.
void setup_logging(int verbosity);

void register_check(CLI::App& app, Context& context);
void register_show(CLI::App& app, Context& context);
void register_presets(CLI::App& app, Context& context);
void register_topo(CLI::App& app, Context& context);
void register_collective(CLI::App& app, Context& context);
void register_run(CLI::App& app, Context& context);
// `trainsim diff A B`: two scenarios or run reports side by side.
void register_diff(CLI::App& app, Context& context);
void register_analyze(CLI::App& app, Context& context);
void register_workload(CLI::App& app, Context& context);
void register_calibrate(CLI::App& app, Context& context);
// `trainsim calibrate fit-stack`, under the calibrate command.
void register_fit_stack(CLI::App* calibrate, Context& context);
void register_sweep(CLI::App& app, Context& context);
void register_merge(CLI::App& app, Context& context);
void register_validate(CLI::App& app, Context& context);
void register_search(CLI::App& app, Context& context);
void register_cluster(CLI::App& app, Context& context);
void register_compare(CLI::App& app, Context& context);

}  // namespace trainsim::cli

#endif  // TRAINSIM_TOOLS_TRAINSIM_CLI_H_
