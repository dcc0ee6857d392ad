// trainsim calibrate: measure this node and write a hardware profile (run), import nccl-tests logs
// into one (import-nccl-tests), check a profile's content hash (verify), derive a profile for a GPU
// you do not have from a measured one (scale). See calibrate/README.md.
#include <cctype>
#include <ctime>
#include <fstream>
#include <functional>
#include <iostream>
#include <sstream>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "calibrate/backend_factory.h"
#include "calibrate/harness.h"
#include "calibrate/nccl_tests/import.h"
#include "calibrate/plan.h"
#include "calibrate/profile/builder.h"
#include "calibrate/profile/content_hash.h"
#include "calibrate/profile/writer.h"
#include "calibrate/report.h"
#include "calibrate/scaling/scale.h"
#include "sim/common/interrupt.h"
#include "sim/common/version.h"
#include "sim/config/units.h"
#include "sim/workload/kernel_shapes.h"
#include "tools/trainsim/cli.h"

namespace trainsim::cli {
namespace {

namespace cal = trainsim::calibrate;

std::string utc_now(const char* format) {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char text[64];
  std::strftime(text, sizeof(text), format, &tm);
  return text;
}

std::string tool_version() { return fmt::format("trainsim {} (git {})", version(), git_sha()); }

// "NVIDIA H200" -> "nvidia-h200".
std::string slug(const std::string& text) {
  std::string out;
  for (const char c : text) {
    if (std::isalnum(static_cast<unsigned char>(c)) != 0) {
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    } else if (!out.empty() && out.back() != '-') {
      out += '-';
    }
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out;
}

// Writes the profile, reads it back through the simulator's loader (the round trip every profile
// must survive) and prints the summary.
void write_and_report(const std::filesystem::path& out, const cal::ProfileDocument& doc, bool force) {
  cal::write_profile(out, doc, force);
  const config::HardwareProfile loaded = config::load_hardware(out);
  std::ifstream in(out, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  for (const std::string& w : doc.warnings) spdlog::warn("{}", w);
  std::cout << fmt::format("# wrote {} ({}; loads as hardware profile {})\n", out.string(),
                           cal::check_content_hash(text.str()).recorded, loaded.name)
            << cal::profile_summary(doc);
}

// Runs `body`, mapping the errors of a calibration to exit codes (ConfigError goes to main: 3).
void guarded(Context& context, const std::function<void()>& body) {
  try {
    body();
    context.exit_code = kExitOk;
  } catch (const cal::ProfileExistsError& e) {
    std::cerr << "error: " << e.what() << '\n';
    context.exit_code = kExitUsage;
  } catch (const std::invalid_argument& e) {
    std::cerr << "error: " << e.what() << '\n';
    context.exit_code = kExitUsage;
  } catch (const config::ConfigError&) {
    throw;
  } catch (const std::runtime_error& e) {  // the device or the file system failed
    std::cerr << "error: " << e.what() << '\n';
    context.exit_code = kExitInternal;
  }
}

struct RunArgs {
  bool quick = false;
  std::optional<int> gpus;
  std::string backend = "auto";
  std::string attention_kernel{cal::kDefaultAttentionKernel};
  std::filesystem::path scenario;
  std::filesystem::path base;
  std::string name;
  std::filesystem::path out;
  bool force = false;
  bool dry_run = false;
  bool no_progress = false;
};

void print_plan(const cal::CalibrationPlan& plan, const cal::DeviceFacts& facts) {
  std::cout << fmt::format("# calibration plan for {} x {} ({} backend): {} items\n", facts.devices,
                           facts.device_name, facts.backend, plan.item_count());
  for (const cal::GemmCase& c : plan.gemms) std::cout << cal::describe(c) << '\n';
  for (const cal::AttentionCase& c : plan.attentions) std::cout << cal::describe(c) << '\n';
  for (const double b : plan.device_copy_bytes) {
    std::cout << "device copy " << config::format_quantity(b, config::QuantityKind::kBytes) << '\n';
  }
  for (const cal::CopyCase& c : plan.copies) std::cout << cal::describe(c) << '\n';
  for (const cal::CollectiveCase& c : plan.collectives) std::cout << cal::describe(c) << '\n';
  std::cout << "interference " << cal::describe(plan.interference_gemm) << " during "
            << cal::describe(plan.interference_collective) << '\n';
  for (const std::string& n : plan.notes) std::cout << "# " << n << '\n';
}

void run_calibration(const RunArgs& args, const Context& context) {
  const std::optional<cal::BackendKind> kind = cal::parse_backend_kind(args.backend);
  if (!kind) throw std::invalid_argument("--backend must be auto, cuda or cpu");
  if (!args.dry_run && args.out.empty()) throw std::invalid_argument("--out FILE is required (or --dry-run)");
  const InterruptGuard interrupt_guard(
      "trainsim calibrate run",
      fmt::format("{}rerun: {}",
                  args.dry_run ? "" : fmt::format("the profile {} was not written; ", args.out.string()),
                  context.command_line));
  if (!args.dry_run && !args.force && std::filesystem::exists(args.out)) {
    throw cal::ProfileExistsError(fmt::format(
        "{} exists; hardware profiles are immutable. Write to another file, or pass --force to replace it",
        args.out.string()));
  }
  cal::BuildOptions build;
  if (!args.base.empty()) {
    build.base = config::load_hardware(args.base);
    build.base_label = args.base.filename().string();
  }
  cal::PlanOptions plan_options;
  plan_options.quick = args.quick;
  if (!args.scenario.empty())
    plan_options.scenario = workload::kernel_shapes(config::load_scenario(args.scenario));
  const std::unique_ptr<cal::Backend> backend = cal::make_backend(*kind, args.gpus, args.attention_kernel);
  plan_options.devices = backend->facts().devices;
  const cal::CalibrationPlan plan = cal::make_plan(plan_options, backend->capabilities());
  if (args.dry_run) {
    print_plan(plan, backend->facts());
    return;
  }
  spdlog::info("calibrating {} x {} ({} backend, {} items{})", backend->facts().devices,
               backend->facts().device_name, backend->facts().backend, plan.item_count(),
               args.quick ? ", quick" : "");
  cal::StderrProgress stderr_progress;
  cal::SilentProgress silent;
  const bool quiet = args.no_progress || spdlog::get_level() > spdlog::level::info;
  const cal::Measurements measurements =
      cal::run_calibration(*backend, plan, quiet ? static_cast<cal::Progress&>(silent) : stderr_progress);
  build.name = args.name.empty()
                   ? fmt::format("{}-measured-{}", slug(measurements.facts.device_name), utc_now("%Y%m%d"))
                   : args.name;
  build.date = utc_now("%Y-%m-%dT%H:%M:%SZ");
  build.tool_version = tool_version();
  build.command = context.command_line;
  write_and_report(args.out, cal::build_measured_profile(measurements, build), args.force);
}

void register_run(CLI::App* calibrate, Context& context) {
  auto args = std::make_shared<RunArgs>();
  CLI::App* cmd = calibrate->add_subcommand("run", "Measure this node and write a hardware profile");
  cmd->add_flag("--quick", args->quick,
                "The short sweeps (under 2 minutes on one H200; ~1 minute on the CPU backend)");
  cmd->add_option("--gpus", args->gpus,
                  "Devices to use (default: every GPU; CPU backend: one worker thread per "
                  "logical CPU, at most 8)");
  cmd->add_option("--backend", args->backend, "auto (the GPU when there is one), cuda or cpu")
      ->capture_default_str()
      ->check(CLI::IsMember({"auto", "cuda", "cpu"}))
      ->envname("TRAINSIM_CALIBRATE_BACKEND");
  cmd->add_option(
         "--attention-kernel", args->attention_kernel,
         "The attention kernels to time (CUDA backend): mma.sync, or wgmma on compute capability 9.0")
      ->capture_default_str()
      ->check(CLI::IsMember({"mma.sync", "wgmma"}));
  cmd->add_option(
         "--scenario", args->scenario,
         "Also measure the GEMMs, attention blocks, one-node collectives and host copies this scenario's "
         "simulation prices")
      ->check(CLI::ExistingFile);
  cmd->add_option(
         "--base", args->base,
         "Cited profile of this GPU model: its datasheet peaks and HBM bandwidth are kept, the measured "
         "efficiencies are fractions of them")
      ->check(CLI::ExistingFile);
  cmd->add_option("--name", args->name, "Profile name (default: <device>-measured-<yyyymmdd>)");
  cmd->add_option("-o,--out", args->out, "The profile to write (refused if it exists)");
  cmd->add_flag("--force", args->force, "Replace an existing profile");
  cmd->add_flag("--dry-run", args->dry_run, "Print the plan (every case) without measuring");
  cmd->add_flag("--no-progress", args->no_progress, "No progress line on stderr");
  cmd->callback([args, &context] { guarded(context, [&] { run_calibration(*args, context); }); });
}

struct ImportArgs {
  std::vector<std::filesystem::path> logs;
  std::filesystem::path into;
  std::filesystem::path out;
  std::string name;
  std::string algorithm;
  bool force = false;
};

void run_import(const ImportArgs& args, const Context& context) {
  std::vector<cal::NcclTestsLog> logs;
  std::vector<config::Diagnostic> problems;
  for (const std::filesystem::path& file : args.logs) {
    try {
      logs.push_back(cal::read_nccl_tests(file));
    } catch (const config::ConfigError& e) {
      problems.insert(problems.end(), e.diagnostics().begin(), e.diagnostics().end());
    }
  }
  if (!problems.empty()) throw config::ConfigError(problems);
  const config::HardwareProfile base = config::load_hardware(args.into);
  cal::ImportOptions options;
  options.name = args.name;
  options.base_label = args.into.filename().string();
  options.date = utc_now("%Y-%m-%dT%H:%M:%SZ");
  options.tool_version = tool_version();
  options.command = context.command_line;
  options.algorithm = args.algorithm;
  const cal::ProfileDocument doc = cal::import_nccl_tests(base, logs, options);
  std::filesystem::path out = args.out;
  if (out.empty()) {
    out = args.into.parent_path() /
          fmt::format("{}-nccl-{}.yaml", args.into.stem().string(), utc_now("%Y%m%d"));
  }
  for (const cal::NcclTestsLog& log : logs)
    spdlog::info("{}: {}, {} sizes", log.file, cal::describe(log), log.rows.size());
  write_and_report(out, doc, args.force);
}

void register_import(CLI::App* calibrate, Context& context) {
  auto args = std::make_shared<ImportArgs>();
  CLI::App* cmd = calibrate->add_subcommand(
      "import-nccl-tests", "Import nccl-tests logs (text or -J JSON) into a new profile based on another");
  cmd->add_option("FILE", args->logs,
                  "Logs of all_reduce_perf, all_gather_perf, reduce_scatter_perf, alltoall_perf, "
                  "sendrecv_perf (one run each)")
      ->required();
  cmd->add_option("--into", args->into, "The profile of the cluster's GPUs the collective tables go into")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("-o,--out", args->out, "The new profile (default: <into>-nccl-<yyyymmdd>.yaml beside it)");
  cmd->add_option("--name", args->name, "Name of the new profile (default: <into's name>-nccl)");
  cmd->add_option(
         "--algorithm", args->algorithm,
         "The NCCL algorithm the logs were timed with (NCCL_ALGO): auto (NCCL's own choice), ring, tree "
         "or nvls (default: a JSON log's NCCL_ALGO; NCCL's choice for a text log)")
      ->check(CLI::IsMember({"auto", "ring", "tree", "nvls"}));
  cmd->add_flag("--force", args->force, "Replace an existing output profile");
  cmd->footer(
      "Profiles are immutable: the result is a new file, the --into profile is left as it is. A table timed "
      "with one algorithm (NCCL_ALGO=Ring, Tree or NVLS) calibrates that algorithm only; one of NCCL's own "
      "choice calibrates every algorithm that has no table of its own.");
  cmd->callback([args, &context] { guarded(context, [&] { run_import(*args, context); }); });
}

void register_verify(CLI::App* calibrate, Context& context) {
  auto files = std::make_shared<std::vector<std::filesystem::path>>();
  CLI::App* cmd =
      calibrate->add_subcommand("verify", "Check that profiles are unchanged since they were written");
  cmd->add_option("FILE", *files, "Profiles written by trainsim calibrate")->required();
  cmd->callback([files, &context] {
    bool all_ok = true;
    for (const std::filesystem::path& file : *files) {
      std::ifstream in(file, std::ios::binary);
      std::stringstream text;
      text << in.rdbuf();
      const cal::HashCheck check = cal::check_content_hash(text.str());
      if (!in || !check.has_hash) {
        std::cerr << file.string()
                  << ": error: no content hash on its second line (not written by trainsim "
                     "calibrate, or not readable)\n";
        all_ok = false;
      } else if (!check.ok()) {
        std::cerr << fmt::format("{}: error: modified since it was written (content hash {}, recorded {})\n",
                                 file.string(), check.actual, check.recorded);
        all_ok = false;
      } else {
        try {
          const config::HardwareProfile p = config::load_hardware(file);
          std::cout << fmt::format("{}: ok: {} {}\n", file.string(), p.name, check.recorded);
        } catch (const config::ConfigError& e) {
          std::cerr << e.what() << '\n';
          all_ok = false;
        }
      }
    }
    context.exit_code = all_ok ? kExitOk : kExitInvalidInput;
  });
}

struct ScaleArgs {
  std::filesystem::path measured;
  std::filesystem::path target;
  std::filesystem::path from_network;
  std::filesystem::path to_network;
  std::filesystem::path out;
  std::string name;
  bool force = false;
};

void run_scale(const ScaleArgs& args, const Context& context) {
  const config::HardwareProfile measured = config::load_hardware(args.measured);
  const config::HardwareProfile target = config::load_hardware(args.target);
  cal::ScaleOptions options;
  options.name = args.name;
  options.measured_label = args.measured.filename().string();
  options.target_label = args.target.filename().string();
  if (!args.from_network.empty()) options.from_network = cal::load_network_part(args.from_network);
  if (!args.to_network.empty()) options.to_network = cal::load_network_part(args.to_network);
  options.date = utc_now("%Y-%m-%dT%H:%M:%SZ");
  options.tool_version = tool_version();
  options.command = context.command_line;
  write_and_report(args.out, cal::scale_profile(measured, target, options), args.force);
}

void register_scale(CLI::App* calibrate, Context& context) {
  auto args = std::make_shared<ScaleArgs>();
  CLI::App* cmd = calibrate->add_subcommand(
      "scale",
      "Derive a profile for a GPU you do not have: its cited profile plus a measured GPU's efficiencies");
  cmd->add_option("MEASURED", args->measured, "A measured (or imported) profile")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--to", args->target, "The cited profile of the target GPU")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--from-network", args->from_network, "Network part the measured collectives ran on")
      ->check(CLI::ExistingFile);
  cmd->add_option("--to-network", args->to_network, "Network part of the target (same tier)")
      ->check(CLI::ExistingFile);
  cmd->add_option("-o,--out", args->out, "The derived profile to write")->required();
  cmd->add_option("--name", args->name, "Its name (default: <target name>-derived)");
  cmd->add_flag("--force", args->force, "Replace an existing profile");
  cmd->callback([args, &context] { guarded(context, [&] { run_scale(*args, context); }); });
}

}  // namespace

void register_calibrate(CLI::App& app, Context& context) {
  CLI::App* calibrate =
      app.add_subcommand("calibrate", "Measure, import and derive hardware profiles; fit stack profiles");
  calibrate->require_subcommand(1);
  register_run(calibrate, context);
  register_import(calibrate, context);
  register_verify(calibrate, context);
  register_scale(calibrate, context);
#if TRAINSIM_SIMULATOR
  register_fit_stack(calibrate, context);  // fitting runs the simulator
#endif
}

}  // namespace trainsim::cli
