// Shared pieces of the trainsim command line: exit codes, global options and the registration
// function of each subcommand (one file per subcommand, cmd_<name>.cc).
#ifndef TRAINSIM_TOOLS_TRAINSIM_CLI_H_
#define TRAINSIM_TOOLS_TRAINSIM_CLI_H_

#include <filesystem>
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

// Arguments of every subcommand that takes one scenario: the file and `--set` overrides.
struct ScenarioArgs {
  std::filesystem::path file;
  std::vector<std::string> overrides;

  // Registers SCENARIO (positional, required) and --set on `cmd`.
  void add_to(CLI::App* cmd);
  // Loads the scenario with the overrides. Throws config::ConfigError.
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
