#include "tools/trainsim/cli.h"

#include <algorithm>
#include <iostream>
#include <thread>

#include <fmt/format.h>
#include <spdlog/cfg/env.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <yaml-cpp/yaml.h>

#if TRAINSIM_SIMULATOR
#include "sim/validate/case.h"
#include "sim/validate/case_scenario.h"
#endif

namespace trainsim::cli {
namespace {

// The scenario a validation case runs (its scenario file with the case's `set`), with `overrides` on
// top.
config::Scenario load_case_scenario(const std::filesystem::path& file,
                                    const std::vector<config::Override>& overrides) {
#if TRAINSIM_SIMULATOR
  return validate::load_case_scenario(validate::load_validation_set(file).cases.at(0).scenario, YAML::Node(),
                                      overrides);
#else
  (void)overrides;
  config::throw_config_error({config::display_name(file), 1, 1}, "validation",
                             "this is a validation case: running the scenario it names needs trainsim built "
                             "with the simulator (-DTRAINSIM_SIMULATOR=ON); or pass that scenario file");
#endif
}

}  // namespace

bool is_validation_case(const std::filesystem::path& file) {
  try {
    const YAML::Node root = YAML::LoadFile(file.string());
    return root.IsMap() && root["validation"].IsDefined();
  } catch (const YAML::Exception&) {
    return false;
  }
}

void setup_logging(int verbosity) {
  auto logger = spdlog::stderr_color_mt("trainsim");
  logger->set_pattern("%^[%l]%$ %v");
  spdlog::set_default_logger(logger);
  spdlog::set_level(verbosity < 0    ? spdlog::level::err
                    : verbosity == 0 ? spdlog::level::info
                    : verbosity == 1 ? spdlog::level::debug
                                     : spdlog::level::trace);
  spdlog::cfg::load_env_levels();
}

bool open_output(const std::filesystem::path& path, std::string_view option, std::optional<AtomicFile>& out) {
  if (path.empty()) return true;
  try {
    out.emplace(path);
  } catch (const std::runtime_error& e) {
    spdlog::error("{}: {}", option, e.what());
    return false;
  }
  return true;
}

int fit_exit_code(const std::string& why, bool ignore_memory) {
  if (why.empty()) return kExitOk;
  if (ignore_memory) {
    spdlog::warn("the plan does not fit: {} (ignored: --ignore-memory)", why);
    return kExitOk;
  }
  spdlog::error("infeasible plan: {}", why);
  return kExitInfeasible;
}

int all_cores() { return static_cast<int>(std::max(1u, std::thread::hardware_concurrency())); }

void add_jobs_option(CLI::App* cmd, int& jobs, std::string_view what) {
  jobs = all_cores();
  cmd->add_option("-j,--jobs", jobs,
                  fmt::format("{} at once, each in its own process (default: all cores)", what))
      ->check(CLI::Range(1, 4096));
}

void add_format_option(CLI::App* cmd, std::string& format, bool csv) {
  format = "table";
  cmd->add_option("--format", format, "Output format")
      ->check(csv ? CLI::IsMember({"table", "json", "csv"}) : CLI::IsMember({"table", "json"}))
      ->capture_default_str();
}

void print_result(std::string_view format, const Renderings& result) {
  if (format == "json") {
    std::cout << result.json();
  } else if (format == "csv" && result.csv) {
    std::cout << result.csv();
  } else {
    std::cout << result.table();
  }
}

bool refuse_all_traffic(bool all_traffic, const std::string& network) {
  if (!all_traffic || network != "ideal") return false;
  spdlog::error(
      "--all-traffic: the ideal network has no contention, so other ranks' traffic changes nothing there; "
      "use --network simgrid");
  return true;
}

void ScenarioArgs::add_to(CLI::App* cmd) {
  cmd->add_option("SCENARIO", file, "Scenario YAML file, or a validation case (the scenario it runs)")
      ->required();
  cmd->add_option("--set", overrides, "Override a scenario key: --set parallelism.tp=4 (repeatable)")
      ->type_name("KEY=VALUE");
}

config::Scenario ScenarioArgs::load() const {
  std::vector<config::Override> parsed;
  parsed.reserve(overrides.size());
  for (const std::string& text : overrides) parsed.push_back(config::parse_override(text));
  if (is_validation_case(file)) return load_case_scenario(file, parsed);
  return config::load_scenario(file, parsed);
}

}  // namespace trainsim::cli
