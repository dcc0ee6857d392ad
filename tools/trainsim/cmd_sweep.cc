// trainsim sweep SWEEP.yaml --out DIR: evaluates every point of a sweep file (simulated, or in
// closed form with --analytic) in parallel forked children, into DIR/results.jsonl and
// DIR/results.csv; resumable, shardable, with progress on stderr.
#include <csignal>
#include <iostream>
#include <signal.h>
#include <unistd.h>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "sim/sweep/check.h"
#include "sim/sweep/runner.h"
#include "tools/trainsim/cli.h"

namespace trainsim::cli {
namespace {

volatile std::sig_atomic_t g_signal = 0;

void on_signal(int signal) { g_signal = signal; }

// SIGINT and SIGTERM set g_signal (and interrupt blocking calls) while it lives.
class StopOnSignal {
 public:
  StopOnSignal() {
    g_signal = 0;
    struct sigaction action {};
    action.sa_handler = on_signal;
    sigemptyset(&action.sa_mask);
    action.sa_flags = 0;  // no SA_RESTART: the runner's poll() returns to check the flag
    ::sigaction(SIGINT, &action, &previous_int_);
    ::sigaction(SIGTERM, &action, &previous_term_);
  }
  ~StopOnSignal() {
    ::sigaction(SIGINT, &previous_int_, nullptr);
    ::sigaction(SIGTERM, &previous_term_, nullptr);
  }
  StopOnSignal(const StopOnSignal&) = delete;
  StopOnSignal& operator=(const StopOnSignal&) = delete;

 private:
  struct sigaction previous_int_ {};
  struct sigaction previous_term_ {};
};

struct SweepArgs {
  std::string file;
  std::string out;
  int jobs = 1;
  bool analytic = false;
  bool full = false;
  bool all_traffic = false;
  size_t check_analytic = 0;
  uint64_t seed = 1;
  bool resume = false;
  bool list = false;
  std::string shard;
  std::string network = "simgrid";
  double time_limit_per_point_s = 0;
};

// "I/N" -> (I, N).
std::pair<size_t, size_t> parse_shard(const std::string& text) {
  size_t slash = text.find('/');
  size_t index = 0, count = 0;
  try {
    size_t used = 0;
    index = std::stoul(text.substr(0, slash), &used);
    if (used != slash) throw std::invalid_argument(text);
    count = std::stoul(text.substr(slash + 1), &used);
    if (used != text.size() - slash - 1) throw std::invalid_argument(text);
  } catch (const std::exception&) {
    throw CLI::ValidationError("--shard", fmt::format("expected I/N such as 0/4, got \"{}\"", text));
  }
  if (count < 1 || index >= count) {
    throw CLI::ValidationError("--shard", fmt::format("\"{}\": need 0 <= I < N", text));
  }
  return {index, count};
}

// --list: the points, one per line, without evaluating them.
void list_points(const sweep::ExpandedSweep& expanded) {
  std::cout << fmt::format("# {} points ({} combinations before the filters)\n# index id values\n",
                           expanded.points.size(), expanded.combinations);
  for (const sweep::Point& p : expanded.points) {
    std::string values;
    for (const sweep::Coordinate& c : p.coordinates) values += fmt::format(" {}={}", c.name, c.text);
    std::cout << fmt::format("{} {}{}\n", p.index, p.id, values);
  }
}

int run(const SweepArgs& args, const Context& context) {
  if (refuse_all_traffic(args.all_traffic, args.network)) return kExitUsage;
  const sweep::SweepFile file = sweep::load_sweep(args.file);
  const sweep::ExpandedSweep expanded = sweep::expand(file);
  if (args.list) {
    list_points(expanded);
    return kExitOk;
  }
  sweep::SweepOptions options;
  options.out = args.out;
  options.jobs = args.jobs;
  options.evaluate.mode = args.analytic ? sweep::Mode::kAnalytic : sweep::Mode::kSimulate;
  options.evaluate.network = engine::network_model(args.network);
  options.evaluate.full = args.full;
  options.evaluate.all_traffic = args.all_traffic;
  options.resume = args.resume;
  if (!args.shard.empty()) std::tie(options.shard_index, options.shard_count) = parse_shard(args.shard);
  options.time_limit_per_point_s = args.time_limit_per_point_s;
  options.sweep_file = args.file;
  spdlog::info(
      "sweep {}: {} points ({} combinations, {} dropped by filters){}, {} with {} jobs", file.name,
      expanded.points.size(), expanded.combinations, expanded.combinations - expanded.points.size(),
      options.shard_count > 1 ? fmt::format(", shard {}/{}", options.shard_index, options.shard_count) : "",
      args.analytic ? "closed form"
                    : fmt::format("simulated ({} network{})", args.network,
                                  args.full          ? ", every rank"
                                  : args.all_traffic ? ", every rank's traffic"
                                                     : ""),
      options.jobs);

  const StopOnSignal stop_on_signal;
  const bool show_progress = spdlog::should_log(spdlog::level::info);
  const sweep::SweepSummary summary = sweep::run_sweep(
      file, expanded, options,
      [&](size_t total) {
        return show_progress
                   ? std::make_unique<sweep::Progress>(std::cerr, total, ::isatty(STDERR_FILENO) != 0)
                   : nullptr;
      },
      [] { return g_signal != 0; });
  if (summary.interrupted) {
    const int signal = g_signal;
    std::cerr << fmt::format(
        "trainsim sweep: interrupted ({}); {} points are in {}/results.jsonl and results.csv; continue with: "
        "{}{}\n",
        signal == SIGINT ? "SIGINT" : "SIGTERM", summary.skipped + summary.evaluated, args.out,
        context.command_line, args.resume ? "" : " --resume");
    return 128 + signal;
  }
  spdlog::info("{} points evaluated, {} already done; results in {}/results.csv", summary.evaluated,
               summary.skipped, args.out);
  if (args.check_analytic > 0) {
    const std::vector<size_t> drawn =
        sweep::draw(sweep::shard_points(expanded.points.size(), options.shard_index, options.shard_count),
                    args.check_analytic, args.seed);
    std::vector<const sweep::Point*> points;
    for (const size_t i : drawn) points.push_back(&expanded.points[i]);
    spdlog::info("checking the closed form against {} simulated points", points.size());
    const std::vector<sweep::CheckRow> rows =
        sweep::check_analytic(file, points, options.evaluate, args.jobs, args.time_limit_per_point_s);
    if (g_signal != 0) return 128 + g_signal;
    std::cout << sweep::render_check(rows, args.seed);
  }
  return kExitOk;
}

}  // namespace

void register_sweep(CLI::App& app, Context& context) {
  auto args = std::make_shared<SweepArgs>();
  CLI::App* cmd = app.add_subcommand(
      "sweep",
      "Evaluate every point of a sweep file (parallel, resumable, shardable) into DIR/results.{jsonl,csv}");
  cmd->add_option("SWEEP", args->file, "Sweep YAML file (scenarios/sweeps/README.md)")->required();
  cmd->add_option("--out", args->out, "Output directory (required unless --list)");
  cmd->add_flag("--list", args->list, "Print the points (index, id, axis values) and stop");
  add_jobs_option(cmd, args->jobs, "Points evaluated");
  cmd->add_flag("--analytic", args->analytic, "Closed-form estimate instead of simulation (fast screening)");
  cmd->add_flag(
         "--full", args->full,
         "Simulate every rank instead of one per symmetry class (every replica's traffic on the fabric)")
      ->excludes("--analytic");
  cmd->add_flag("--all-traffic", args->all_traffic,
                "Simulate one rank per symmetry class with every rank's traffic on the network (as trainsim "
                "run --all-traffic: what --full shows of a contended fabric, at a fraction of its time)")
      ->excludes("--analytic")
      ->excludes("--full");
  cmd->add_option("--check-analytic", args->check_analytic,
                  "Afterwards, estimate and simulate K drawn points and print how far apart they are")
      ->type_name("K");
  cmd->add_option("--seed", args->seed, "Seed of the --check-analytic draw")->capture_default_str();
  cmd->add_flag("--resume", args->resume, "Continue a sweep in DIR, skipping the points it has");
  cmd->add_option("--shard", args->shard, "Evaluate only the points whose index mod N is I")
      ->type_name("I/N");
  cmd->add_option("--network", args->network, "Network model of simulated points")
      ->check(CLI::IsMember({"simgrid", "ideal"}))
      ->capture_default_str();
  cmd->add_option("--time-limit-per-point", args->time_limit_per_point_s,
                  "Seconds a point may take; one that takes longer is a failed result (0: no limit)")
      ->check(CLI::NonNegativeNumber)
      ->type_name("S");
  cmd->callback([args, &context] {
    if (!args->list && args->out.empty()) throw CLI::RequiredError("--out");
    if (!args->shard.empty()) parse_shard(args->shard);  // usage errors before any work
    try {
      context.exit_code = run(*args, context);
    } catch (const sweep::SweepError& e) {
      std::cerr << "trainsim sweep: error: " << e.what() << '\n';
      context.exit_code = kExitInvalidInput;
    }
  });
}

}  // namespace trainsim::cli
