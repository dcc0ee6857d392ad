// trainsim: the command-line front end. Each subcommand lives in its own cmd_<name>.cc; this file
// parses the command line, runs the chosen subcommand and maps errors to the documented exit codes.
#include <exception>
#include <iostream>
#if defined(__GLIBC__)
#include <malloc.h>
#endif
#include <string>
#include <vector>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "sim/common/version.h"
#include "sim/config/diagnostics.h"
#if TRAINSIM_SIMULATOR
#include "sim/engine/provenance.h"
#endif
#include "tools/trainsim/cli.h"

namespace {

// The usage error of a command line that names no subcommand (none, a misspelt one, or an unknown
// option before one): what went wrong, the closest subcommand, and every subcommand with what it does.
std::string no_subcommand_message(const CLI::App& app, const CLI::ParseError& error, int argc, char** argv) {
  std::vector<std::string> names;
  std::string listing;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    names.push_back(sub->get_name());
    listing += fmt::format("  {:<12} {}\n", sub->get_name(), sub->get_description());
  }
  std::string word;
  for (int i = 1; i < argc && word.empty(); ++i) {
    if (argv[i][0] != '-') word = argv[i];
  }
  const std::string problem = word.empty() ? std::string(error.what())
                                           : fmt::format("unknown subcommand \"{}\"{}", word,
                                                         trainsim::config::did_you_mean(word, names));
  return fmt::format("trainsim: {}\nsubcommands:\n{}Run `trainsim SUBCOMMAND --help` for its options.\n",
                     problem, listing);
}

std::string version_text() {
#if TRAINSIM_SIMULATOR
  const std::string simulator = fmt::format("SimGrid {}", trainsim::engine::simgrid_version());
#else
  const std::string simulator = "simulator: not built (calibration only)";
#endif
  return fmt::format("trainsim {} (git {})\n{}\nCUDA kernels: {}\ninput schema_version: 1",
                     trainsim::version(), trainsim::git_sha(), simulator,
                     TRAINSIM_HAVE_CUDA ? "built" : "not built");
}

// Keeps freed memory in the process for the next allocation instead of returning it to the kernel.
// The simulator builds and drops operation graphs of tens of MB again and again (the closed-form
// estimates of a run's advice, search's screening): with glibc's defaults each such buffer is a fresh
// mmap whose pages are faulted in and zeroed one by one, about 40 % of the default scenario's run.
// The price is a resident size that stays near its high-water mark until the process exits (the
// default scenario's run: 4.5 s instead of 7.7 s on the ideal network, 830 MB instead of 760 MB).
void keep_freed_memory() {
#if defined(__GLIBC__)
  // Allocations below this come from the heap and go back to it; larger ones get their own mapping.
  constexpr int kHeapBelow_bytes = 1 << 30;
  mallopt(M_MMAP_THRESHOLD, kHeapBelow_bytes);
  mallopt(M_TRIM_THRESHOLD, kHeapBelow_bytes);
#endif
}

}  // namespace

int main(int argc, char** argv) {
  keep_freed_memory();
  namespace cli = trainsim::cli;
  CLI::App app{
      "trainsim: simulate distributed transformer training on a cluster, before you buy or book it."};
  app.set_version_flag("--version", version_text());
  app.require_subcommand(1);
  app.fallthrough();  // -v/-q also after the subcommand
  int verbose = 0;
  bool quiet = false;
  app.add_flag("-v,--verbose", verbose, "More log output on stderr (repeat for debug)");
  app.add_flag("-q,--quiet", quiet, "Only errors on stderr");
  app.footer(
      "Exit codes: 0 ok, 1 differences (diff --exit-code), 2 usage error, 3 invalid input, 4 infeasible "
      "plan, 5 budget exceeded, 70 internal\n"
      "error, 130/143 interrupted (SIGINT/SIGTERM).\n"
      "Results go to stdout; logs and progress to stderr.");
  app.parse_complete_callback([&] { cli::setup_logging(quiet ? -1 : verbose); });

  cli::Context context;
  for (int i = 0; i < argc; ++i)
    context.command_line += (i == 0 ? "" : " ") + std::string(i == 0 ? "trainsim" : argv[i]);
#if TRAINSIM_SIMULATOR
  cli::register_check(app, context);
#endif
  cli::register_show(app, context);
  cli::register_presets(app, context);
#if TRAINSIM_SIMULATOR
  cli::register_topo(app, context);
  cli::register_collective(app, context);
  cli::register_run(app, context);
  cli::register_diff(app, context);
  cli::register_analyze(app, context);
#endif
  cli::register_workload(app, context);
  cli::register_calibrate(app, context);
#if TRAINSIM_SIMULATOR
  cli::register_sweep(app, context);
  cli::register_merge(app, context);
  cli::register_validate(app, context);
  cli::register_search(app, context);
  cli::register_cluster(app, context);
  cli::register_compare(app, context);
#endif

  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {  // --help, --help-all, --version
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    if (app.get_subcommands().empty()) {
      std::cerr << no_subcommand_message(app, e, argc, argv);
    } else {
      app.exit(e);
    }
    return cli::kExitUsage;
  } catch (const trainsim::config::ConfigError& e) {
    std::cerr << e.what() << '\n';
    return cli::kExitInvalidInput;
  } catch (const std::exception& e) {
    spdlog::critical("internal error: {}", e.what());
    return cli::kExitInternal;
  }
  return context.exit_code;
}
