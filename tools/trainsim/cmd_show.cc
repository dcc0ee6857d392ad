// trainsim show SCENARIO: the fully resolved scenario (presets expanded, defaults filled) as YAML.
#include <iostream>

#include "sim/config/emit.h"
#include "tools/trainsim/cli.h"

namespace trainsim::cli {

void register_show(CLI::App& app, Context& context) {
  auto args = std::make_shared<ScenarioArgs>();
  CLI::App* cmd =
      app.add_subcommand("show", "Print the fully resolved scenario (defaults filled in) as YAML");
  args->add_to(cmd);
  cmd->callback([args, &context] {
    std::cout << config::to_yaml(args->load());
    context.exit_code = kExitOk;
  });
}

}  // namespace trainsim::cli
