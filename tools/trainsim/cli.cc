#include "tools/trainsim/cli.h"

#include <spdlog/cfg/env.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

namespace trainsim::cli {

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

void ScenarioArgs::add_to(CLI::App* cmd) {
  cmd->add_option("SCENARIO", file, "Scenario YAML file")->required();
  cmd->add_option("--set", overrides, "Override a scenario key: --set parallelism.tp=4 (repeatable)")
      ->type_name("KEY=VALUE");
}

config::Scenario ScenarioArgs::load() const {
  std::vector<config::Override> parsed;
  parsed.reserve(overrides.size());
  for (const std::string& text : overrides) parsed.push_back(config::parse_override(text));
  return config::load_scenario(file, parsed);
}

}  // namespace trainsim::cli
