// `trainsim calibrate` end to end, through the binary: the CPU-backend quick calibration (what CI
// runs on every commit) produces a profile that `trainsim run` accepts; imported nccl-tests logs are
// reproduced by `trainsim collective`; errors are located; profiles are immutable.
#include <chrono>
#include <cstdlib>
#include <regex>
#include <sys/wait.h>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "calibrate/collective_kinds.h"
#include "calibrate/nccl_tests/log.h"
#include "kernels/device_query.h"
#include "sim/config/loader.h"
#include "tests/calibrate/nccl_tests_writer.h"
#include "tests/calibrate/test_util.h"

namespace trainsim::calibrate {
namespace {

using testing::read_file;

struct Result {
  int rc = -1;
  std::string out;
  std::string err;
};

// Runs `trainsim ARGS` in the source tree, capturing stdout and stderr.
Result trainsim(const std::string& args, const std::filesystem::path& scratch) {
  const std::filesystem::path out = scratch / "stdout.txt";
  const std::filesystem::path err = scratch / "stderr.txt";
  const std::string command = fmt::format("cd '{}' && '{}' {} > '{}' 2> '{}'", testing::source_dir().string(),
                                          TRAINSIM_EXE, args, out.string(), err.string());
  const int status = std::system(command.c_str());
  Result r;
  r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = read_file(out);
  r.err = read_file(err);
  return r;
}

std::string fixtures_args() {
  std::string args;
  for (const testing::Fixture& f : testing::fixtures()) args += " tests/calibrate/fixtures/" + f.file;
  return args;
}

// The CI check of the issue: harness -> profile -> simulator on the CPU backend.
TEST(CalibrateCli, CpuQuickCalibrationFeedsTheSimulator) {
  const std::filesystem::path dir = testing::scratch_dir();
  const std::filesystem::path profile = dir / "cpu.yaml";
  const auto start = std::chrono::steady_clock::now();
  const Result run = trainsim(
      fmt::format("calibrate run --backend cpu --quick --no-progress --out '{}'", profile.string()), dir);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_EQ(run.rc, 0) << run.err;
  // Recorded, not asserted: wall time depends on the machine's load (tools/README.md gives the
  // measured figure).
  RecordProperty("cpu_quick_calibration_s", std::to_string(seconds));
  EXPECT_NE(run.out.find("# wrote " + profile.string()), std::string::npos) << run.out;

  const config::HardwareProfile p = config::load_hardware(profile);
  EXPECT_EQ(p.provenance.kind, config::ProvenanceKind::kMeasured);
  EXPECT_EQ(p.gpu.name.rfind("cpu", 0), 0u);
  EXPECT_FALSE(p.gemm_samples.empty());
  EXPECT_FALSE(p.attention_samples.empty());
  EXPECT_FALSE(p.copy_samples.empty());
  EXPECT_FALSE(p.collective_samples.empty());
  EXPECT_TRUE(p.peak_flops_per_s(config::Dtype::kFp32).has_value());
  EXPECT_EQ(p.source_of("gpu.peak_flops.fp32").rfind("measured: best fp32 GEMM rate", 0), 0u);
  EXPECT_NE(p.provenance.command.find("calibrate run --backend cpu --quick"), std::string::npos);
  EXPECT_FALSE(p.provenance.software.compiler.empty());
  EXPECT_EQ(p.provenance.software.attention_kernel, "reference");
  EXPECT_TRUE(p.provenance.software.driver.empty()) << "the CPU backend has no GPU driver";
  EXPECT_GT(p.gemm_samples.front().spread.repetitions, 0);
  EXPECT_LE(p.gemm_samples.front().spread.min_s, p.gemm_samples.front().duration_s);
  EXPECT_EQ(trainsim(fmt::format("calibrate verify '{}'", profile.string()), dir).rc, 0);

  // The simulator accepts it: a scenario trained in fp32 (the CPU references' type) on the cpu device.
  const Result sim =
      trainsim(fmt::format("run scenarios/00-gpt3-125m-1gpu.yaml --set cluster.hardware='{}' --set "
                           "training.dtype=fp32 --ignore-memory --format json",
                           profile.string()),
               dir);
  ASSERT_EQ(sim.rc, 0) << sim.err;
  const nlohmann::json report = nlohmann::json::parse(sim.out);
  EXPECT_GT(report.at("iteration_time_s").get<double>(), 0);

  // Immutable: a second run to the same file is refused and leaves it as it was.
  const std::string before = read_file(profile);
  const Result again =
      trainsim(fmt::format("calibrate run --backend cpu --quick --out '{}'", profile.string()), dir);
  EXPECT_EQ(again.rc, 2);
  EXPECT_NE(again.err.find("immutable"), std::string::npos) << again.err;
  EXPECT_EQ(read_file(profile), before);
}

TEST(CalibrateCli, DryRunListsThePlanWithoutMeasuring) {
  const std::filesystem::path dir = testing::scratch_dir();
  const Result r = trainsim("calibrate run --backend cpu --quick --dry-run --gpus 1", dir);
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("# calibration plan for 1 x cpu"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("all_reduce 1 ranks 4MiB"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("interference gemm fp32"), std::string::npos);
}

TEST(CalibrateCli, DryRunWithAScenarioNamesWhatItCannotMeasure) {
  const std::filesystem::path dir = testing::scratch_dir();
  const Result r = trainsim(
      fmt::format(
          "calibrate run --backend cpu --quick --dry-run --gpus 2 --scenario '{}'",
          (std::filesystem::path(TRAINSIM_SOURCE_DIR) / "scenarios" / "04-llama3-8b-ulysses-8xh100.yaml")
              .string()),
      dir);
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("# scenario gemm bf16 "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("skipped: the cpu backend has no bf16 GEMM"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("# scenario alltoall 8 ranks"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("skipped: this node has 2 devices"), std::string::npos) << r.out;
}

TEST(CalibrateCli, CudaBackendWithoutAGpuIsAUsageError) {
  if (kernels::cuda_device_available()) GTEST_SKIP() << "a CUDA device is present";
  const std::filesystem::path dir = testing::scratch_dir();
  const Result r = trainsim(
      fmt::format("calibrate run --backend cuda --quick --out '{}'", (dir / "x.yaml").string()), dir);
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("--backend cuda"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir / "x.yaml"));
}

TEST(CalibrateCli, AttentionKernelChoiceIsTheCudaBackends) {
  const std::filesystem::path dir = testing::scratch_dir();
  const std::string out = (dir / "x.yaml").string();
  Result r = trainsim(
      fmt::format("calibrate run --backend cpu --quick --attention-kernel wgmma --out '{}'", out), dir);
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("--attention-kernel wgmma: the CPU backend times the CPU reference"),
            std::string::npos)
      << r.err;
  r = trainsim(fmt::format("calibrate run --backend cpu --quick --attention-kernel flash --out '{}'", out),
               dir);
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("--attention-kernel: flash not in {mma.sync,wgmma}"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir / "x.yaml"));
}

TEST(CalibrateCli, ImportWritesANewVerifiedProfileAndVerifyCatchesEdits) {
  const std::filesystem::path dir = testing::scratch_dir();
  const std::filesystem::path out = dir / "h100-nccl.yaml";
  const Result r =
      trainsim(fmt::format("calibrate import-nccl-tests{} --into calibrate/profiles/h100-sxm5-80gb.yaml "
                           "--out '{}'",
                           fixtures_args(), out.string()),
               dir);
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("all_reduce         8     1"), std::string::npos) << r.out;
  EXPECT_EQ(trainsim(fmt::format("calibrate verify '{}'", out.string()), dir).rc, 0);
  std::string text = read_file(out);
  text.replace(text.find("989.5TFLOP/s"), 12, "999.5TFLOP/s");
  testing::write_file(out, text);
  const Result verify = trainsim(fmt::format("calibrate verify '{}'", out.string()), dir);
  EXPECT_EQ(verify.rc, 3);
  EXPECT_NE(verify.err.find("modified since it was written"), std::string::npos) << verify.err;
}

TEST(CalibrateCli, MalformedLogsGiveLocatedErrorsForEveryFile) {
  const std::filesystem::path dir = testing::scratch_dir();
  const std::string good = read_file(testing::fixtures_dir() / "all_reduce_perf.8xh100.log");
  testing::write_file(dir / "all_reduce_perf.cut.log", good.substr(0, good.find("# Out of bounds")));
  std::string garbled = good;
  garbled.replace(garbled.find("float"), 5, "flo t");
  testing::write_file(dir / "all_gather_perf.garbled.log", garbled);
  const Result r = trainsim(
      fmt::format("calibrate import-nccl-tests '{}' '{}' --into calibrate/profiles/h100-sxm5-80gb.yaml "
                  "--out '{}'",
                  (dir / "all_reduce_perf.cut.log").string(), (dir / "all_gather_perf.garbled.log").string(),
                  (dir / "x.yaml").string()),
      dir);
  EXPECT_EQ(r.rc, 3);
  EXPECT_TRUE(
      std::regex_search(r.err, std::regex(R"(all_reduce_perf\.cut\.log:\d+:1: error: the log ends before)")))
      << r.err;
  EXPECT_TRUE(std::regex_search(
      r.err, std::regex(R"(all_gather_perf\.garbled\.log:\d+:\d+: error: expected 13 columns)")))
      << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir / "x.yaml"));
}

TEST(CalibrateCli, ScaleDerivesAProfileForAGpuWeDoNotOwn) {
  const std::filesystem::path dir = testing::scratch_dir();
  const std::filesystem::path imported = dir / "h100-nccl.yaml";
  ASSERT_EQ(
      trainsim(fmt::format(
                   "calibrate import-nccl-tests{} --into calibrate/profiles/h100-sxm5-80gb.yaml --out '{}'",
                   fixtures_args(), imported.string()),
               dir)
          .rc,
      0);
  const std::filesystem::path derived = dir / "b200.yaml";
  const Result r =
      trainsim(fmt::format("calibrate scale '{}' --to calibrate/profiles/b200-sxm-180gb.yaml "
                           "--from-network calibrate/profiles/network/nvlink4-nvswitch.yaml --to-network "
                           "calibrate/profiles/network/nvlink5-nvswitch.yaml --out '{}'",
                           imported.string(), derived.string()),
               dir);
  ASSERT_EQ(r.rc, 0) << r.err;
  const config::HardwareProfile p = config::load_hardware(derived);
  EXPECT_EQ(p.provenance.kind, config::ProvenanceKind::kDerived);
  EXPECT_FALSE(p.collective_fits.empty());
}

// After importing a log, `trainsim collective` on the same GPUs reproduces it within 2 % at every
// size >= 64 KiB (the protocol switches between sizes included), and says how far off it is below.
TEST(CalibrateCli, ImportedLogIsReproducedByTrainsimCollective) {
  const std::filesystem::path dir = testing::scratch_dir();
  const std::filesystem::path profile = dir / "h100-nccl.yaml";
  ASSERT_EQ(
      trainsim(fmt::format(
                   "calibrate import-nccl-tests{} --into calibrate/profiles/h100-sxm5-80gb.yaml --out '{}'",
                   fixtures_args(), profile.string()),
               dir)
          .rc,
      0);
  const std::string topology =
      "topologies/dgx-h100-cluster.yaml";  // 8 x H100 per node on NVSwitch, NDR fabric
  const Result probe =
      trainsim(fmt::format("collective all_reduce --gpus 8 -b 1M -e 1M -t {} --hardware '{}'", topology,
                           profile.string()),
               dir);
  ASSERT_EQ(probe.rc, 0) << probe.err;
  EXPECT_EQ(probe.out.find("(uncalibrated)"), std::string::npos) << probe.out;
  for (const testing::Fixture& f : testing::fixtures()) {
    SCOPED_TRACE(f.file);
    const NcclTestsLog log = read_nccl_tests(testing::fixtures_dir() / f.file);
    const Result sim =
        trainsim(fmt::format("collective {} --gpus {} -b {} -e {} -f 2 -t {} --hardware '{}' --format json",
                             config::to_string(log.kind), log.rank_count, static_cast<long>(f.run.min_bytes),
                             static_cast<long>(f.run.max_bytes), topology, profile.string()),
                 dir);
    ASSERT_EQ(sim.rc, 0) << sim.err;
    const nlohmann::json results = nlohmann::json::parse(sim.out).at("results");
    std::string below;
    size_t compared = 0;
    for (const nlohmann::json& row : results) {
      const double size = row.at("size_bytes").get<double>();
      for (const NcclTestsRow& measured : log.rows) {
        if (measured.size_bytes != size || size <= 0) continue;
        const double error = row.at("time_us").get<double>() / measured.out_of_place.time_us - 1;
        if (size >= 64 << 10) {
          EXPECT_LE(std::abs(error), 0.02) << "size " << size;
          ++compared;
        } else {
          below += fmt::format(" {:.0f}B:{:+.1f}%", size, 100 * error);
        }
      }
    }
    EXPECT_GT(compared, 5u);
    RecordProperty(f.file + ".below_64KiB", below);
    std::cout << f.file << ": simulated vs imported below 64 KiB:" << below << '\n';
  }
}

// A table timed with NCCL_ALGO=Ring calibrates `--algorithm ring` only; the other algorithms keep the
// table of NCCL's own choice, and the header says which table calibrated the requested algorithm.
TEST(CalibrateCli, TablesOfOneAlgorithmCalibrateThatAlgorithm) {
  const std::filesystem::path dir = testing::scratch_dir();
  const testing::Fixture choice = testing::fixtures().front();  // all_reduce over 8 GPUs
  testing::SyntheticRun ring = choice.run;
  ring.nccl_algo = "Ring";
  for (testing::ModelRange& range : ring.model) range.bus_bandwidth_bytes_per_s *= 0.7;
  const std::filesystem::path ring_log = dir / "all_reduce_ring.json";
  testing::write_file(ring_log, testing::nccl_tests_json(ring));
  const std::filesystem::path profile = dir / "h100-nccl.yaml";
  const Result imported =
      trainsim(fmt::format("calibrate import-nccl-tests tests/calibrate/fixtures/{} '{}' --into "
                           "calibrate/profiles/h100-sxm5-80gb.yaml --out '{}'",
                           choice.file, ring_log.string(), profile.string()),
               dir);
  ASSERT_EQ(imported.rc, 0) << imported.err;
  for (const auto& [algorithm, run, calibrated_by] :
       {std::tuple{"ring", ring, "timed with NCCL_ALGO=ring"},
        std::tuple{"tree", choice.run, "NCCL's own choice"}, std::tuple{"auto", choice.run, ""}}) {
    SCOPED_TRACE(algorithm);
    const Result sim =
        trainsim(fmt::format("collective all_reduce --gpus 8 -b 64K -e 1G -f 4 --algorithm {} -t "
                             "topologies/dgx-h100-cluster.yaml --hardware '{}' --format json",
                             algorithm, profile.string()),
                 dir);
    ASSERT_EQ(sim.rc, 0) << sim.err;
    const nlohmann::json report = nlohmann::json::parse(sim.out);
    EXPECT_NE(report.value("calibration", std::string()).find(calibrated_by), std::string::npos)
        << report.value("calibration", std::string());
    for (const nlohmann::json& row : report.at("results")) {
      const double size = row.at("size_bytes").get<double>();
      EXPECT_NEAR(row.at("time_us").get<double>() * 1e-6, testing::model_time_s(run, size),
                  0.02 * testing::model_time_s(run, size))
          << "size " << size;
    }
  }
  const Result unpinned = trainsim(fmt::format("calibrate import-nccl-tests '{}' --algorithm pat --into "
                                               "calibrate/profiles/h100-sxm5-80gb.yaml --out '{}'",
                                               ring_log.string(), (dir / "pat.yaml").string()),
                                   dir);
  EXPECT_EQ(unpinned.rc, 2) << unpinned.err;
}

}  // namespace
}  // namespace trainsim::calibrate
