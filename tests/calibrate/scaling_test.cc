// Network parts load with their citations; a measured profile scales to a GPU we do not own.
#include <gtest/gtest.h>

#include "calibrate/harness.h"
#include "calibrate/profile/builder.h"
#include "calibrate/profile/writer.h"
#include "calibrate/scaling/scale.h"
#include "sim/config/diagnostics.h"
#include "sim/config/loader.h"
#include "tests/calibrate/fake_backend.h"
#include "tests/calibrate/profile_compare.h"
#include "tests/calibrate/test_util.h"

namespace trainsim::calibrate {
namespace {

using config::Dtype;

std::filesystem::path network(const std::string& name) {
  return testing::source_dir() / "calibrate/profiles/network" / (name + ".yaml");
}

TEST(NetworkParts, EveryShippedPartLoadsWithEveryNumberCited) {
  size_t parts = 0;
  for (const auto& entry :
       std::filesystem::directory_iterator(testing::source_dir() / "calibrate/profiles/network")) {
    if (entry.path().extension() != ".yaml") continue;
    SCOPED_TRACE(entry.path().string());
    try {
      const NetworkPart part = load_network_part(entry.path());
      EXPECT_EQ(part.name, entry.path().stem().string());
      EXPECT_GT(part.bandwidth_bytes_per_s, 0);
      EXPECT_FALSE(part.sources.at("bandwidth").empty());
      ++parts;
    } catch (const config::ConfigError& e) {
      ADD_FAILURE() << e.what();
    }
  }
  EXPECT_GE(parts, 9u);  // NVLink 3/4/5, HDR/NDR/XDR, RoCE, PCIe 4/5
  EXPECT_DOUBLE_EQ(load_network_part(network("infiniband-ndr")).bandwidth_bytes_per_s, 50e9);
  EXPECT_DOUBLE_EQ(load_network_part(network("nvlink4-nvswitch")).bandwidth_bytes_per_s, 450e9);
  EXPECT_TRUE(load_network_part(network("nvlink4-nvswitch")).in_network_reduction);
}

TEST(NetworkParts, MistakesAreAllReportedWithTheirPositions) {
  const std::filesystem::path file = testing::scratch_dir() / "bad.yaml";
  testing::write_file(file,
                      "schema_version: 1\n"
                      "name: bad\n"
                      "tier: intra-node\n"
                      "bandwith: 100GB/s\n"
                      "latency: 5\n"
                      "sources:\n"
                      "  latency: a datasheet\n"
                      "  line_rate: nothing\n");
  try {
    load_network_part(file);
    FAIL() << "loaded a broken network part";
  } catch (const config::ConfigError& e) {
    const std::string text = e.what();
    EXPECT_NE(text.find("bad.yaml:3:7: error: tier: \"intra-node\": expected intra_node"), std::string::npos)
        << text;
    EXPECT_NE(text.find("bad.yaml:4:1: error: bandwith: unknown key (did you mean \"bandwidth\"?)"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("bandwidth: missing"), std::string::npos) << text;
    EXPECT_NE(text.find("bad.yaml:5:10: error: latency:"), std::string::npos) << text;
    EXPECT_NE(text.find("sources.line_rate: names \"line_rate\", which is not a value of this part"),
              std::string::npos)
        << text;
  }
}

config::HardwareProfile measured_fake(const std::filesystem::path& dir) {
  testing::FakeBackend backend(8);
  SilentProgress progress;
  const Measurements m =
      run_calibration(backend, make_plan({true, 8, std::nullopt}, backend.capabilities()), progress);
  BuildOptions o;
  o.name = "h100-fake-measured";
  o.date = "2026-11-29T12:00:00Z";
  o.tool_version = "trainsim test";
  o.command = "trainsim calibrate run";
  o.base = config::load_hardware(testing::source_dir() / "calibrate/profiles/h100-sxm5-80gb.yaml");
  o.base_label = "h100-sxm5-80gb.yaml";
  const std::filesystem::path file = dir / "measured.yaml";
  write_profile(file, build_measured_profile(m, o), false);
  return config::load_hardware(file);
}

TEST(Scale, KeepsTheMeasuredFractionOfThePeaks) {
  const std::filesystem::path dir = testing::scratch_dir();
  const config::HardwareProfile measured = measured_fake(dir);
  const config::HardwareProfile b200 =
      config::load_hardware(testing::source_dir() / "calibrate/profiles/b200-sxm-180gb.yaml");
  ScaleOptions o;
  o.measured_label = "measured.yaml";
  o.target_label = "b200-sxm-180gb.yaml";
  o.from_network = load_network_part(network("nvlink4-nvswitch"));
  o.to_network = load_network_part(network("nvlink5-nvswitch"));
  o.date = "2026-11-29T12:00:00Z";
  o.tool_version = "trainsim test";
  o.command = "trainsim calibrate scale";
  const ProfileDocument doc = scale_profile(measured, b200, o);
  const config::HardwareProfile& p = doc.profile;
  EXPECT_EQ(p.name, "b200-sxm-180gb-derived");
  EXPECT_EQ(p.provenance.kind, config::ProvenanceKind::kDerived);
  EXPECT_EQ(p.gpu.peak_flops_per_s, b200.gpu.peak_flops_per_s);  // the target's datasheet
  ASSERT_EQ(p.gemm_samples.size(), measured.gemm_samples.size());
  const double peak_ratio = *measured.peak_flops_per_s(Dtype::kBf16) / *b200.peak_flops_per_s(Dtype::kBf16);
  for (size_t i = 0; i < p.gemm_samples.size(); ++i) {
    EXPECT_NEAR(p.gemm_samples[i].duration_s, measured.gemm_samples[i].duration_s * peak_ratio,
                1e-3 * p.gemm_samples[i].duration_s);
    EXPECT_EQ(p.gemm_samples[i].spread.repetitions, 0) << "the spread was the measured GPU's";
  }
  EXPECT_GT(measured.gemm_samples.front().spread.repetitions, 0);
  EXPECT_TRUE(p.provenance.software.driver.empty() && p.provenance.host.name.empty());
  EXPECT_EQ(p.compute.gemm_efficiency, measured.compute.gemm_efficiency);
  ASSERT_FALSE(p.collective_fits.empty());
  EXPECT_NEAR(p.collective_fits[0].bus_bandwidth_bytes_per_s,
              2 * measured.collective_fits[0].bus_bandwidth_bytes_per_s,
              1e-3 * p.collective_fits[0].bus_bandwidth_bytes_per_s);  // 900 / 450 GB/s
  EXPECT_EQ(p.collective_fits[0].latency_s, measured.collective_fits[0].latency_s);
  EXPECT_EQ(p.source_of("gemm_samples").rfind("derived: measured.yaml scaled to b200-sxm-180gb.yaml", 0), 0u);
  const std::filesystem::path file = dir / "derived.yaml";
  write_profile(file, doc, false);
  testing::expect_same_profile(config::load_hardware(file), p);
}

TEST(Scale, WithoutFabricsTheCollectivesAreLeftOutAndSaidSo) {
  const std::filesystem::path dir = testing::scratch_dir();
  const config::HardwareProfile measured = measured_fake(dir);
  const config::HardwareProfile a100 =
      config::load_hardware(testing::source_dir() / "calibrate/profiles/a100-sxm4-80gb.yaml");
  ScaleOptions o;
  o.measured_label = "measured.yaml";
  o.target_label = "a100-sxm4-80gb.yaml";
  const ProfileDocument doc = scale_profile(measured, a100, o);
  EXPECT_TRUE(doc.profile.collective_fits.empty());
  EXPECT_NE(doc.profile.provenance.notes.find("collective tables left out"), std::string::npos);
  // Host copies keep their latency and scale the rest by the host-link ratio (PCIe 5 -> 4).
  const double ratio =
      measured.host_link.h2d_bandwidth_bytes_per_s / a100.host_link.h2d_bandwidth_bytes_per_s;
  const config::CopySample& last = measured.copy_samples.back();
  EXPECT_GT(doc.profile.copy_samples.back().duration_s, last.duration_s);
  EXPECT_NEAR(doc.profile.copy_samples.back().duration_s,
              measured.host_link.latency_s + (last.duration_s - measured.host_link.latency_s) * ratio,
              1e-3 * doc.profile.copy_samples.back().duration_s);
  o.from_network = load_network_part(network("nvlink4-nvswitch"));
  EXPECT_THROW(scale_profile(measured, a100, o), std::invalid_argument);  // one fabric alone
  o.to_network = load_network_part(network("infiniband-hdr"));
  EXPECT_THROW(scale_profile(measured, a100, o), std::invalid_argument);           // tiers differ
  EXPECT_THROW(scale_profile(a100, a100, ScaleOptions{}), std::invalid_argument);  // a cited profile
}

}  // namespace
}  // namespace trainsim::calibrate
