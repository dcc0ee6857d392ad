// trainsim collective KIND: a simulated nccl-tests run. Plans one collective per size of the sweep
// over the first N GPUs of a topology (node-major), simulates them one after the other on the
// SimGrid platform, and prints the nccl-tests table (size, count, type, redop, root, time, algbw,
// busbw) with the algorithm chosen for each size and, across nodes without calibration, NCCL's protocol.
#include <chrono>
#include <cstdio>
#include <iostream>
#include <iterator>
#include <map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "sim/common/version.h"
#include "sim/cost/collective.h"
#include "sim/cost/collective_calibration.h"
#include "sim/cost/collective_metrics.h"
#include "sim/cost/flow_runner.h"
#include "sim/engine/provenance.h"
#include "sim/platform/simgrid_platform.h"
#include "tools/trainsim/cli.h"

namespace trainsim::cli {
namespace {

struct CollectiveArgs {
  std::string kind;
  int gpus = 0;
  std::string min_bytes = "32M";
  std::string max_bytes = "32M";
  int64_t step_factor = 1;
  std::string step_bytes = "1M";
  std::filesystem::path topology;
  std::filesystem::path hardware;
  bool uncalibrated = false;
  std::string algorithm = "auto";
  std::string datatype = "float";
  std::string op = "sum";
  int root = 0;
  std::string format = "table";
};

// nccl-tests element types and their sizes.
const std::map<std::string, int>& datatypes() {
  static const std::map<std::string, int> kTypes = {
      {"int8", 1},   {"uint8", 1}, {"int32", 4}, {"uint32", 4}, {"int64", 8},
      {"uint64", 8}, {"half", 2},  {"float", 4}, {"double", 8}, {"bfloat16", 2}};
  return kTypes;
}

// A size as nccl-tests parses it: a number with an optional K, M or G (powers of 1024).
uint64_t parse_size(const std::string& option, const std::string& text) {
  double value = 0;
  char unit = 0;
  char extra = 0;
  const int fields = std::sscanf(text.c_str(), "%lf%c%c", &value, &unit, &extra);
  double scale = 1;
  if (fields == 2) {
    switch (unit) {
      case 'K':
      case 'k':
        scale = 1024.0;
        break;
      case 'M':
      case 'm':
        scale = 1024.0 * 1024;
        break;
      case 'G':
      case 'g':
        scale = 1024.0 * 1024 * 1024;
        break;
      default:
        scale = -1;
    }
  }
  if (fields < 1 || fields > 2 || scale < 0 || !(value >= 0)) {
    throw std::invalid_argument(
        fmt::format("{}: invalid size \"{}\" (a number of bytes, optionally with K, M or G)", option, text));
  }
  return static_cast<uint64_t>(value * scale);
}

std::vector<uint64_t> sweep(const CollectiveArgs& args) {
  const uint64_t min_bytes = parse_size("--min-bytes", args.min_bytes);
  const uint64_t max_bytes = parse_size("--max-bytes", args.max_bytes);
  const uint64_t step_bytes = parse_size("--step-bytes", args.step_bytes);
  if (min_bytes > max_bytes) {
    throw std::invalid_argument(
        fmt::format("--min-bytes {} is larger than --max-bytes {}", min_bytes, max_bytes));
  }
  if (args.step_factor < 1) throw std::invalid_argument("--step-factor must be at least 1");
  if (args.step_factor > 1 && min_bytes == 0) {
    throw std::invalid_argument("--min-bytes must be positive with --step-factor");
  }
  if (args.step_factor == 1 && step_bytes == 0 && min_bytes < max_bytes) {
    throw std::invalid_argument("--step-bytes must be positive");
  }
  std::vector<uint64_t> sizes;
  for (uint64_t size = min_bytes; size <= max_bytes;
       size = args.step_factor > 1 ? size * static_cast<uint64_t>(args.step_factor) : size + step_bytes) {
    sizes.push_back(size);
    if (args.step_factor == 1 && step_bytes == 0) break;
  }
  return sizes;
}

// "all_reduce" (the profile schema's spelling), "all-reduce" and "allreduce" all name kAllReduce.
std::string squash(std::string_view text) {
  std::string out;
  for (const char c : text) {
    if (c != '_' && c != '-') out += c;
  }
  return out;
}

std::optional<cost::CollectiveKind> parse_kind(std::string_view text) {
  for (const auto& [kind, name] : config::EnumNames<cost::CollectiveKind>::kNames) {
    if (squash(name) == squash(text)) return kind;
  }
  return std::nullopt;
}

std::string kind_names() {
  std::string names;
  for (const auto& entry : config::EnumNames<cost::CollectiveKind>::kNames) {
    names += fmt::format("{}{}", names.empty() ? "" : ", ", entry.second);
  }
  return names;
}

bool shows_redop(cost::CollectiveKind kind) {
  return kind == cost::CollectiveKind::kAllReduce || kind == cost::CollectiveKind::kReduceScatter ||
         kind == cost::CollectiveKind::kReduce || kind == cost::CollectiveKind::kSendRecv;
}

bool shows_root(cost::CollectiveKind kind) {
  return kind == cost::CollectiveKind::kBroadcast || kind == cost::CollectiveKind::kReduce;
}

struct Row {
  uint64_t size_bytes = 0;
  uint64_t count = 0;
  double time_s = 0;
  double algbw_gbps = 0;
  double busbw_gbps = 0;
  std::string algorithm;
  std::string protocol;  // NCCL's, where the model chose one (across nodes, uncalibrated); else "-"
};

std::string time_column(double us) {
  if (us >= 10000.0) return fmt::format("{:7.0f}", us);
  if (us >= 100.0) return fmt::format("{:7.1f}", us);
  return fmt::format("{:7.2f}", us);
}

struct Report {
  const CollectiveArgs& args;
  cost::CollectiveKind kind;
  const platform::TopologyGraph& graph;
  std::optional<config::HardwareProfile> hardware;
  std::vector<Row> rows;
  double average_busbw_gbps = 0;
  int calibrated_fits = 0;  // profile fits that tuned the model
  std::string calibration;  // what calibrated a requested algorithm ("" for auto or without a profile)

  std::string redop() const { return shows_redop(kind) ? args.op : ""; }
  int root() const { return shows_root(kind) ? args.root : -1; }
};

std::string render_table(const Report& r) {
  std::string out;
  const config::Topology& t = r.graph.topology();
  const int n = r.args.gpus;
  const uint64_t step = r.args.step_factor > 1 ? static_cast<uint64_t>(r.args.step_factor)
                                               : parse_size("--step-bytes", r.args.step_bytes);
  fmt::format_to(std::back_inserter(out), "# trainsim collective: simulated nccl-tests {}\n",
                 cost::nccl_tests_name(r.kind));
  fmt::format_to(std::back_inserter(out), "# nGpus {} minBytes {} maxBytes {} step: {}({}) algorithm: {}\n",
                 n, parse_size("--min-bytes", r.args.min_bytes), parse_size("--max-bytes", r.args.max_bytes),
                 step, r.args.step_factor > 1 ? "factor" : "bytes", r.args.algorithm);
  fmt::format_to(std::back_inserter(out), "#\n# Using devices\n");
  fmt::format_to(std::back_inserter(out), "#  Ranks {}-{}: {} .. {} ({} of {} nodes)\n", 0, n - 1,
                 r.graph.gpu_name(0), r.graph.gpu_name(n - 1), r.graph.node_of_gpu(n - 1) + 1,
                 r.graph.node_count());
  fmt::format_to(std::back_inserter(out), "#  Topology {}: {}\n", t.name, r.graph.fabric_description());
  if (r.hardware)
    fmt::format_to(std::back_inserter(out), "#  Hardware {} ({})\n", r.hardware->name, r.hardware->gpu.name);
  fmt::format_to(
      std::back_inserter(out),
      "#  Model: SimGrid {} CM02 max-min sharing, latency per phase, NCCL protocols across nodes, {}\n",
      engine::simgrid_version(),
      r.calibrated_fits > 0
          ? fmt::format("latency and efficiency calibrated from {} measured fits", r.calibrated_fits)
          : std::string("ideal efficiency (uncalibrated)"));
  if (!r.calibration.empty()) fmt::format_to(std::back_inserter(out), "#  Calibration: {}\n", r.calibration);
  fmt::format_to(std::back_inserter(out), "#\n");
  fmt::format_to(std::back_inserter(out),
                 "# {:>10}  {:>12}  {:>8}  {:>6}  {:>6}  {:>7}  {:>6}  {:>6}  {:<12}  {}\n", "size", "count",
                 "type", "redop", "root", "time", "algbw", "busbw", "algorithm", "protocol");
  fmt::format_to(std::back_inserter(out), "# {:>10}  {:>12}  {:>8}  {:>6}  {:>6}  {:>7}  {:>6}  {:>6}\n",
                 "(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)");
  for (const Row& row : r.rows) {
    fmt::format_to(std::back_inserter(out),
                   "{:>12}  {:>12}  {:>8}  {:>6}  {:>6}  {}  {:6.2f}  {:6.2f}  {:<12}  {}\n", row.size_bytes,
                   row.count, r.args.datatype, r.redop(), r.root(), time_column(row.time_s * 1e6),
                   row.algbw_gbps, row.busbw_gbps, row.algorithm, row.protocol);
  }
  fmt::format_to(std::back_inserter(out), "# Avg bus bandwidth    : {:g}\n#\n", r.average_busbw_gbps);
  return out;
}

std::string render_csv(const Report& r) {
  std::string out;
  fmt::format_to(
      std::back_inserter(out),
      "size_bytes,count_elements,type,redop,root,time_us,algbw_gbps,busbw_gbps,algorithm,protocol\n");
  for (const Row& row : r.rows) {
    fmt::format_to(std::back_inserter(out), "{},{},{},{},{},{},{},{},{},{}\n", row.size_bytes, row.count,
                   r.args.datatype, r.redop(), r.root(), row.time_s * 1e6, row.algbw_gbps, row.busbw_gbps,
                   row.algorithm, row.protocol);
  }
  return out;
}

nlohmann::ordered_json to_json(const Report& r) {
  nlohmann::ordered_json j;
  j["schema_version"] = 1;
  j["trainsim_version"] = version();
  j["simgrid_version"] = engine::simgrid_version();
  j["test"] = cost::nccl_tests_name(r.kind);
  j["kind"] = config::to_string(r.kind);
  j["gpus"] = r.args.gpus;
  j["datatype"] = r.args.datatype;
  j["redop"] = r.redop();
  j["root"] = r.root();
  j["algorithm_requested"] = r.args.algorithm;
  j["topology"] = {{"name", r.graph.topology().name}, {"fabric", r.graph.fabric_description()}};
  j["hardware"] = r.hardware ? nlohmann::ordered_json(r.hardware->name) : nlohmann::ordered_json(nullptr);
  if (!r.calibration.empty()) j["calibration"] = r.calibration;
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (const Row& row : r.rows) {
    rows.push_back({{"size_bytes", row.size_bytes},
                    {"count_elements", row.count},
                    {"time_us", row.time_s * 1e6},
                    {"algbw_gbps", row.algbw_gbps},
                    {"busbw_gbps", row.busbw_gbps},
                    {"algorithm", row.algorithm},
                    {"protocol", row.protocol == "-" ? nlohmann::ordered_json(nullptr)
                                                     : nlohmann::ordered_json(row.protocol)}});
  }
  j["results"] = rows;
  j["avg_busbw_gbps"] = r.average_busbw_gbps;
  return j;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// What calibrated the requested `algorithm` for this group: a table timed with it (NCCL_ALGO), one
// of NCCL's own choice (whichever algorithm NCCL picked at each size), or none.
std::string calibration_note(const cost::CalibratedTuning& calibrated, cost::CollectiveKind kind,
                             cost::Algorithm algorithm, const platform::TopologyGraph& graph,
                             const CollectiveArgs& args) {
  const bool inter = graph.node_of_gpu(args.gpus - 1) > 0;
  const cost::CalibratedTuning::Key key{kind, algorithm,
                                        inter ? cost::Tier::kInterNode : cost::Tier::kIntraNode};
  const std::string where =
      fmt::format("{} {}", config::to_string(kind), inter ? "across nodes" : "in one node");
  if (calibrated.own_tables.count(key) != 0) {
    return fmt::format("{} by the profile's {} table timed with NCCL_ALGO={}", args.algorithm, where,
                       args.algorithm);
  }
  if (calibrated.tuning.entries.count(key) != 0) {
    return fmt::format(
        "{} by the profile's {} table of NCCL's own choice (none was timed with NCCL_ALGO={}): it runs "
        "at the efficiency NCCL reached with whichever algorithm it picked at each size",
        args.algorithm, where, args.algorithm);
  }
  return fmt::format("none for {}: the profile has no {} table; the links at their nominal rates",
                     args.algorithm, where);
}

void run(const CollectiveArgs& args) {
  const cost::CollectiveKind kind = *parse_kind(args.kind);
  const cost::Algorithm algorithm = *cost::parse_algorithm(args.algorithm);
  std::vector<uint64_t> sizes =
      kind == cost::CollectiveKind::kBarrier ? std::vector<uint64_t>{0} : sweep(args);

  if (args.hardware.empty() && !args.uncalibrated) {
    throw std::invalid_argument(
        "name the GPUs' hardware profile with --hardware (e.g. calibrate/profiles/h100-sxm5-80gb.yaml): its "
        "measured or cited collective efficiencies are what NCCL reaches on them; --uncalibrated simulates "
        "the topology's links at their nominal rates, a bound no NCCL run reaches");
  }
  const config::Topology topology = config::load_topology(args.topology);
  std::optional<config::HardwareProfile> hardware;
  if (!args.hardware.empty()) hardware = config::load_hardware(args.hardware);
  if (args.gpus < 1 || args.gpus > topology.total_gpus()) {
    throw std::invalid_argument(
        fmt::format("--gpus {}: {} has {} GPUs", args.gpus, topology.name, topology.total_gpus()));
  }
  if (args.root < 0 || args.root >= args.gpus) {
    throw std::invalid_argument(fmt::format("--root {}: ranks are 0 to {}", args.root, args.gpus - 1));
  }

  auto start = std::chrono::steady_clock::now();
  const platform::TopologyGraph graph(topology);
  cost::CollectiveModel model{cost::view_of(graph), {}};
  int calibrated_fits = 0;
  std::string calibration;
  if (hardware) {
    const cost::CalibratedTuning calibrated = cost::tuning_from_fits(*hardware, model.topology);
    model.tuning = calibrated.tuning;
    calibrated_fits = calibrated.fits_used;
    if (algorithm != cost::Algorithm::kAuto)
      calibration = calibration_note(calibrated, kind, algorithm, graph, args);
  }
  spdlog::debug("topology graph: {} vertices, {} links in {:.3f} s", graph.store().vertex_count(),
                graph.store().link_count(), seconds_since(start));

  start = std::chrono::steady_clock::now();
  std::vector<int> members(static_cast<size_t>(args.gpus));
  for (int i = 0; i < args.gpus; ++i) members[static_cast<size_t>(i)] = i;
  const int type_bytes = datatypes().at(args.datatype);
  std::vector<cost::CollectiveSchedule> schedules;
  std::vector<cost::NcclTestsCounts> counts;
  for (const uint64_t size : sizes) {
    counts.push_back(cost::nccl_tests_counts(kind, size, type_bytes, args.gpus));
    schedules.push_back(cost::plan_collective(kind, members, static_cast<double>(counts.back().size_bytes),
                                              model, algorithm, shows_root(kind) ? args.root : 0));
  }
  spdlog::debug("planned {} collectives in {:.3f} s", schedules.size(), seconds_since(start));

  start = std::chrono::steady_clock::now();
  const std::unique_ptr<simgrid::s4u::Engine> engine = platform::create_engine();
  const platform::Platform platform(*engine, graph);
  spdlog::debug("SimGrid platform built in {:.3f} s", seconds_since(start));
  start = std::chrono::steady_clock::now();
  const std::vector<double> durations = cost::run_sequentially(*engine, platform, schedules);
  size_t flows = 0;
  for (const cost::CollectiveSchedule& s : schedules) {
    for (const cost::Phase& p : s.phases) flows += p.flows.size();
  }
  spdlog::debug("simulated {} flows in {:.3f} s", flows, seconds_since(start));

  Report report{args, kind, graph, hardware, {}, 0, calibrated_fits, calibration};
  const double factor = cost::bus_bandwidth_factor(kind, args.gpus);
  for (size_t i = 0; i < sizes.size(); ++i) {
    Row row;
    row.size_bytes = counts[i].size_bytes;
    row.count = counts[i].count;
    row.time_s = durations[i];
    row.algorithm = cost::to_string(schedules[i].algorithm);
    row.protocol = schedules[i].protocol ? std::string(cost::to_string(*schedules[i].protocol)) : "-";
    if (row.time_s > 0) row.algbw_gbps = static_cast<double>(row.size_bytes) / 1e9 / row.time_s;
    row.busbw_gbps = row.algbw_gbps * factor;
    report.average_busbw_gbps += row.busbw_gbps / static_cast<double>(sizes.size());
    report.rows.push_back(std::move(row));
  }
  print_result(args.format, {[&] { return json_text(to_json(report)); }, [&] { return render_table(report); },
                             [&] { return render_csv(report); }});
}

std::vector<std::string> names(const std::vector<std::string_view>& views) {
  return std::vector<std::string>(views.begin(), views.end());
}

}  // namespace

void register_collective(CLI::App& app, Context& context) {
  auto args = std::make_shared<CollectiveArgs>();
  CLI::App* cmd =
      app.add_subcommand("collective", "Simulate nccl-tests: one collective over a sweep of sizes");
  cmd->add_option("KIND", args->kind, "Collective: " + kind_names() + " (or with '-', e.g. all-reduce)")
      ->required()
      ->check(CLI::Validator(
          [](std::string& text) {
            return parse_kind(text) ? std::string()
                                    : "unknown collective \"" + text + "\" (one of " + kind_names() + ")";
          },
          "KIND"));
  cmd->add_option("--gpus", args->gpus, "Number of ranks: the first N GPUs of the topology, node-major")
      ->required();
  cmd->add_option("-b,--min-bytes", args->min_bytes, "Smallest size (K, M, G = 1024^1..3)")
      ->capture_default_str();
  cmd->add_option("-e,--max-bytes", args->max_bytes, "Largest size")->capture_default_str();
  cmd->add_option("-f,--step-factor", args->step_factor,
                  "Multiply the size by this factor (1: add --step-bytes)")
      ->capture_default_str();
  cmd->add_option("-i,--step-bytes", args->step_bytes, "Increment when --step-factor is 1")
      ->capture_default_str();
  cmd->add_option("-t,--topology", args->topology, "Topology YAML file")
      ->required()
      ->envname("TRAINSIM_TOPOLOGY");
  CLI::Option* hardware = cmd->add_option(
      "--hardware", args->hardware,
      "Hardware profile YAML file: its collective efficiencies (required unless --uncalibrated)");
  cmd->add_flag("--uncalibrated", args->uncalibrated,
                "Without a hardware profile: the topology's links at their nominal rates (an upper bound)")
      ->excludes(hardware);
  cmd->add_option("-a,--algorithm", args->algorithm, "Collective algorithm")
      ->capture_default_str()
      ->check(CLI::IsMember(names(cost::algorithm_names())));
  std::vector<std::string> types;
  for (const auto& entry : datatypes()) types.push_back(entry.first);
  cmd->add_option("-d,--datatype", args->datatype, "Element type")
      ->capture_default_str()
      ->check(CLI::IsMember(types));
  cmd->add_option("-o,--op", args->op, "Reduction operation")
      ->capture_default_str()
      ->check(CLI::IsMember({"sum", "prod", "max", "min", "avg"}));
  cmd->add_option("-r,--root", args->root, "Root rank of broadcast and reduce")->capture_default_str();
  add_format_option(cmd, args->format, true);
  cmd->footer(
      "busbw = algbw x 2(n-1)/n (all-reduce), (n-1)/n (all-gather, reduce-scatter, all-to-all), 1 (others), "
      "as in\n"
      "nccl-tests doc/PERFORMANCE.md. Each size runs alone on an idle network; -v prints timings on stderr.");
  cmd->callback([args, &context] {
    try {
      run(*args);
      context.exit_code = kExitOk;
    } catch (const std::invalid_argument& e) {  // bad values, incl. cost::CollectiveError
      std::cerr << "error: " << e.what() << '\n';
      context.exit_code = kExitUsage;
    }
  });
}

}  // namespace trainsim::cli
