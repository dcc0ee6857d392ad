// The harness -> fit -> profile -> loader pipeline on a backend with known timings.
#include "calibrate/harness.h"

#include <cmath>

#include <gtest/gtest.h>

#include "calibrate/collective_kinds.h"
#include "calibrate/fit/collective_fits.h"
#include "calibrate/profile/builder.h"
#include "calibrate/profile/writer.h"
#include "sim/config/loader.h"
#include "tests/calibrate/fake_backend.h"
#include "tests/calibrate/profile_compare.h"
#include "tests/calibrate/test_util.h"

namespace trainsim::calibrate {
namespace {

using testing::FakeBackend;

class CountingProgress : public Progress {
 public:
  void start(size_t items) override { items_ = items; }
  void step(const std::string&) override { ++steps_; }
  void finish() override { finished_ = true; }
  size_t items_ = 0;
  size_t steps_ = 0;
  bool finished_ = false;
};

BuildOptions build_options() {
  BuildOptions o;
  o.name = "fake-measured";
  o.date = "2026-11-29T12:00:00Z";
  o.tool_version = "trainsim test";
  o.command = "trainsim calibrate run --quick --out fake.yaml";
  return o;
}

TEST(Harness, TimesEveryItemOfThePlanAndReportsProgress) {
  FakeBackend backend(4);
  const CalibrationPlan plan = make_plan({true, 4, std::nullopt}, backend.capabilities());
  CountingProgress progress;
  const Measurements m = run_calibration(backend, plan, progress);
  EXPECT_EQ(progress.items_, plan.item_count());
  EXPECT_EQ(progress.steps_, plan.item_count());
  EXPECT_TRUE(progress.finished_);
  EXPECT_EQ(m.gemms.size(), plan.gemms.size());
  EXPECT_EQ(m.attentions.size(), plan.attentions.size());
  EXPECT_EQ(m.collectives.size(), plan.collectives.size());
  EXPECT_EQ(m.copies.size(), plan.copies.size());
  EXPECT_EQ(m.device_copies.size(), plan.device_copy_bytes.size());
  EXPECT_DOUBLE_EQ(m.launch.median_s, FakeBackend::kLaunchS);
  ASSERT_TRUE(m.pipeline_sync.has_value());
  EXPECT_NEAR(m.interference_concurrent.median_s / m.interference_alone.median_s, 1 + FakeBackend::kSlowdown,
              1e-12);
}

TEST(Harness, RefusedCasesBecomeNotes) {
  FakeBackend backend(2);
  CalibrationPlan plan = make_plan({true, 2, std::nullopt}, backend.capabilities());
  plan.collectives.push_back({config::CollectiveKind::kAllReduce, 3, 1024});  // more ranks than devices
  CountingProgress progress;
  const Measurements m = run_calibration(backend, plan, progress);
  EXPECT_EQ(m.collectives.size(), plan.collectives.size() - 1);
  ASSERT_FALSE(m.notes.empty());
  EXPECT_NE(m.notes.back().find("all_reduce 3 ranks"), std::string::npos);
}

// Profile values are what the backend timed: medians, fits, efficiencies against the base's peaks;
// and the file the writer makes loads back to exactly those values.
TEST(MeasuredProfile, HoldsWhatWasMeasuredAndLoadsBack) {
  using config::Dtype;
  FakeBackend backend(8);
  const CalibrationPlan plan = make_plan({true, 8, std::nullopt}, backend.capabilities());
  SilentProgress progress;
  const Measurements m = run_calibration(backend, plan, progress);
  BuildOptions o = build_options();
  o.base = config::load_hardware(testing::source_dir() / "calibrate/profiles/h100-sxm5-80gb.yaml");
  o.base_label = "h100-sxm5-80gb.yaml";
  const ProfileDocument doc = build_measured_profile(m, o);
  const config::HardwareProfile& p = doc.profile;
  EXPECT_TRUE(doc.warnings.empty());

  EXPECT_EQ(p.gpu.name, "NVIDIA Fake GPU");
  EXPECT_EQ(p.peak_flops_per_s(Dtype::kBf16), o.base->peak_flops_per_s(Dtype::kBf16));
  EXPECT_EQ(p.source_of("gpu.peak_flops.bf16").rfind("from h100-sxm5-80gb.yaml: ", 0), 0u);
  EXPECT_EQ(p.source_of("gpu.sm_count").rfind("queried:", 0), 0u);
  const double peak = *o.base->peak_flops_per_s(Dtype::kBf16);
  EXPECT_NEAR(p.compute.gemm_efficiency, FakeBackend::kGemmFlopsPerS / peak, 1e-4);
  // The fake runs fp8 GEMMs at the bf16 rate: a quarter of the fp8 peak.
  EXPECT_NEAR(p.compute.gemm_efficiency_fp8,
              FakeBackend::kGemmFlopsPerS / *o.base->peak_flops_per_s(Dtype::kFp8), 1e-4);
  EXPECT_EQ(p.source_of("compute.gemm_efficiency_fp8").rfind("measured: best fp8 GEMM rate", 0), 0u);
  EXPECT_NEAR(p.compute.attention_forward_efficiency, FakeBackend::kAttentionFlopsPerS / peak, 1e-4);
  EXPECT_NEAR(p.compute.memory_efficiency,
              FakeBackend::kDeviceCopyBytesPerS / o.base->gpu.hbm_bandwidth_bytes_per_s, 1e-4);
  EXPECT_DOUBLE_EQ(p.compute.kernel_launch_s, FakeBackend::kLaunchS);
  EXPECT_DOUBLE_EQ(p.compute.host_sync_s, FakeBackend::kHostSyncS);
  EXPECT_DOUBLE_EQ(p.compute.comm_compute_slowdown, FakeBackend::kSlowdown);
  EXPECT_NEAR(p.host_link.h2d_bandwidth_bytes_per_s, FakeBackend::kCopyBytesPerS,
              0.01 * FakeBackend::kCopyBytesPerS);
  EXPECT_NEAR(p.host_link.latency_s, FakeBackend::kCopyLatencyS, 0.01 * FakeBackend::kCopyLatencyS);
  EXPECT_EQ(p.host_link.pcie_generation, 5);
  // The context as measured, NCCL's buffers (one GPU cannot measure them) from the base.
  ASSERT_TRUE(p.runtime_memory.has_value());
  EXPECT_DOUBLE_EQ(p.runtime_memory->context_bytes, FakeBackend::kContextBytes);
  EXPECT_EQ(p.source_of("runtime_memory.context").rfind("measured:", 0), 0u);
  EXPECT_DOUBLE_EQ(p.runtime_memory->collective_communicator_bytes,
                   o.base->runtime_memory->collective_communicator_bytes);
  EXPECT_EQ(p.source_of("runtime_memory.p2p_peer_in_node"),
            "from h100-sxm5-80gb.yaml: " + o.base->source_of("runtime_memory.p2p_peer_in_node"));
  // Power as measured; communication (it needs peers) from the base.
  ASSERT_TRUE(p.power.has_value());
  EXPECT_DOUBLE_EQ(p.power->limit_w, FakeBackend::kPower.limit_w);
  EXPECT_DOUBLE_EQ(p.power->idle_w, FakeBackend::kPower.idle_w);
  EXPECT_DOUBLE_EQ(p.power->compute_w, FakeBackend::kPower.compute_w);
  EXPECT_DOUBLE_EQ(p.power->memory_w, FakeBackend::kPower.memory_w);
  EXPECT_EQ(p.source_of("power.compute")
                .rfind("measured: board energy (NVML) over 2 s of gemm bf16 8192x8192x8192", 0),
            0u)
      << p.source_of("power.compute");
  EXPECT_DOUBLE_EQ(p.power->communication_w, o.base->power->communication_w);
  EXPECT_EQ(p.source_of("power.communication"),
            "from h100-sxm5-80gb.yaml: " + o.base->source_of("power.communication"));

  ASSERT_EQ(p.gemm_samples.size(), m.gemms.size());
  for (const config::GemmSample& s : p.gemm_samples) {
    const double flops = 2.0 * s.m * s.n * s.k;
    EXPECT_NEAR(s.duration_s, flops / FakeBackend::kGemmFlopsPerS, 5e-4 * s.duration_s);
  }
  // The fake's n repetitions spread evenly over +-1% of the median: min 0.99x, p90 the nearest rank's.
  const int n = plan.compute_policy.repetitions;
  const double p90_factor = 0.99 + 0.02 * (std::ceil(0.9 * n) - 1) / (n - 1);
  for (const config::GemmSample& s : p.gemm_samples) {
    EXPECT_EQ(s.spread.repetitions, n);
    EXPECT_NEAR(s.spread.min_s, 0.99 * s.duration_s, 1e-3 * s.duration_s);  // each to 4 digits
    EXPECT_NEAR(s.spread.p90_s, p90_factor * s.duration_s, 1e-3 * s.duration_s);
  }
  for (const config::CopySample& s : p.copy_samples)
    EXPECT_EQ(s.spread.repetitions, plan.copy_policy.repetitions);
  for (const config::CollectiveSample& s : p.collective_samples) EXPECT_GT(s.spread.min_s, 0);
  for (const config::AttentionSample& s : p.attention_samples) EXPECT_LE(s.spread.min_s, s.duration_s);
  EXPECT_EQ(p.collective_samples.size(), m.collectives.size());
  ASSERT_FALSE(p.collective_fits.empty());
  for (const config::CollectiveFit& f : p.collective_fits) {
    SCOPED_TRACE(std::string(config::to_string(f.kind)) + " " + std::to_string(f.ranks));
    EXPECT_NEAR(f.latency_s, FakeBackend::kCollectiveLatencyS, 0.01 * FakeBackend::kCollectiveLatencyS);
    EXPECT_NEAR(f.bus_bandwidth_bytes_per_s, FakeBackend::kBusBytesPerS, 0.01 * FakeBackend::kBusBytesPerS);
    EXPECT_GT(bus_bandwidth_factor(f.kind, static_cast<int>(f.ranks)), 0);
  }
  EXPECT_EQ(p.provenance.kind, config::ProvenanceKind::kMeasured);
  const config::SoftwareVersions& software = p.provenance.software;
  EXPECT_EQ(software.driver, "570.124.06");
  EXPECT_EQ(software.cuda_runtime, "12.8");
  EXPECT_EQ(software.blas, "12.8.4");
  EXPECT_EQ(software.collectives, "2.26.2");
  EXPECT_EQ(software.compiler, "");
  EXPECT_EQ(software.attention_kernel, "mma.sync");
  EXPECT_EQ(p.provenance.host.cpu, "Fake CPU");
  EXPECT_EQ(p.provenance.host.name, "node01");
  EXPECT_EQ(p.provenance.notes.find("570.124.06"), std::string::npos) << "typed, not repeated in notes";
  EXPECT_NE(p.provenance.notes.find("FPDT cross-check"), std::string::npos);

  const std::filesystem::path file = testing::scratch_dir() / "fake.yaml";
  write_profile(file, doc, false);
  testing::expect_same_profile(config::load_hardware(file), p);
}

TEST(MeasuredProfile, WithoutABaseThePeaksAreTheBestMeasuredRatesNamedAsSuch) {
  FakeBackend backend(1);
  SilentProgress progress;
  const Measurements m =
      run_calibration(backend, make_plan({true, 1, std::nullopt}, backend.capabilities()), progress);
  const ProfileDocument doc = build_measured_profile(m, build_options());
  const config::HardwareProfile& p = doc.profile;
  EXPECT_NEAR(*p.peak_flops_per_s(config::Dtype::kBf16), FakeBackend::kGemmFlopsPerS,
              1e-3 * FakeBackend::kGemmFlopsPerS);
  EXPECT_NE(p.source_of("gpu.peak_flops.bf16").find("not a datasheet peak"), std::string::npos);
  EXPECT_NEAR(p.gpu.hbm_bandwidth_bytes_per_s, FakeBackend::kDeviceCopyBytesPerS,
              1e-3 * FakeBackend::kDeviceCopyBytesPerS);
  EXPECT_DOUBLE_EQ(p.compute.gemm_efficiency, 1.0);
  EXPECT_DOUBLE_EQ(p.compute.memory_efficiency, 1.0);
  EXPECT_TRUE(p.collective_fits.size() >= 1);  // sendrecv over one rank still has a bus bandwidth
  // The measured power needs a base for the state one GPU cannot measure: noted, not written.
  EXPECT_FALSE(p.power.has_value());
  EXPECT_NE(
      p.provenance.notes.find("power measured (limit 700W, idle 85W, compute 680W, memory 420W) but not "
                              "written"),
      std::string::npos)
      << p.provenance.notes;
  const std::filesystem::path file = testing::scratch_dir() / "fake.yaml";
  write_profile(file, doc, false);
  testing::expect_same_profile(config::load_hardware(file), p);
}

TEST(MeasuredProfile, MemoryEfficiencyComesFromTheLargestDeviceCopyNotACachedSmallOne) {
  FakeBackend backend(1);
  SilentProgress progress;
  Measurements m =
      run_calibration(backend, make_plan({false, 1, std::nullopt}, backend.capabilities()), progress);
  ASSERT_GE(m.device_copies.size(), 2u);
  for (DeviceCopyMeasurement& d : m.device_copies) {
    if (d.bytes < 64.0 * 1024 * 1024) d.summary.median_s /= 3;  // served from the last-level cache
  }
  BuildOptions o = build_options();
  o.base = config::load_hardware(testing::source_dir() / "calibrate/profiles/h100-sxm5-80gb.yaml");
  o.base_label = "h100-sxm5-80gb.yaml";
  const ProfileDocument doc = build_measured_profile(m, o);
  EXPECT_NEAR(doc.profile.compute.memory_efficiency,
              FakeBackend::kDeviceCopyBytesPerS / o.base->gpu.hbm_bandwidth_bytes_per_s, 1e-4);
  EXPECT_NE(doc.profile.source_of("compute.memory_efficiency").find("largest size"), std::string::npos);
}

TEST(MeasuredProfile, AMeasuredRateAboveTheBasePeakIsReported) {
  FakeBackend backend(1);
  SilentProgress progress;
  const Measurements m =
      run_calibration(backend, make_plan({true, 1, std::nullopt}, backend.capabilities()), progress);
  BuildOptions o = build_options();
  o.base =
      config::load_hardware(testing::source_dir() / "calibrate/profiles/a100-sxm4-80gb.yaml");  // 312 TFLOP/s
  o.base_label = "a100-sxm4-80gb.yaml";
  const ProfileDocument doc = build_measured_profile(m, o);
  ASSERT_FALSE(doc.warnings.empty());
  EXPECT_NE(doc.warnings.front().find("exceeds the peak"), std::string::npos);
  EXPECT_DOUBLE_EQ(doc.profile.compute.gemm_efficiency, 1.0);  // clamped to the schema's range, and said so
}

}  // namespace
}  // namespace trainsim::calibrate
