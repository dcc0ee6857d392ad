// trainsim merge DIR... --out DIR: combines the output directories of a sweep's shards into the
// directory an unsharded run would have written, checking that no point is missing or duplicated.
#include <iostream>

#include <spdlog/spdlog.h>

#include "sim/sweep/merge.h"
#include "sim/sweep/results.h"
#include "tools/trainsim/cli.h"

namespace trainsim::cli {
namespace {

struct MergeArgs {
  std::vector<std::string> dirs;
  std::string out;
};

int run(const MergeArgs& args) {
  std::vector<std::filesystem::path> dirs(args.dirs.begin(), args.dirs.end());
  try {
    const sweep::MergeSummary summary = sweep::merge_sweeps(dirs, args.out);
    spdlog::info("merged {} points from {} directories into {}/results.csv", summary.points,
                 summary.directories, args.out);
  } catch (const sweep::SweepError& e) {
    std::cerr << "trainsim merge: error: " << e.what() << '\n';
    return kExitInvalidInput;
  }
  return kExitOk;
}

}  // namespace

void register_merge(CLI::App& app, Context& context) {
  auto args = std::make_shared<MergeArgs>();
  CLI::App* cmd = app.add_subcommand("merge", "Combine the output directories of a sweep's shards into one");
  cmd->add_option("DIR", args->dirs, "Output directories of trainsim sweep --shard")->required();
  cmd->add_option("--out", args->out, "Directory for the combined results")->required();
  cmd->callback([args, &context] { context.exit_code = run(*args); });
}

}  // namespace trainsim::cli
