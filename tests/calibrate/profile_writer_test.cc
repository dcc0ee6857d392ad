#include <sys/stat.h>

#include <gtest/gtest.h>

#include "calibrate/profile/content_hash.h"
#include "calibrate/profile/writer.h"
#include "sim/config/loader.h"
#include "tests/calibrate/profile_compare.h"
#include "tests/calibrate/test_util.h"

namespace trainsim::calibrate {
namespace {

using config::CollectiveKind;
using config::Dtype;
using testing::read_file;
using testing::scratch_dir;

// A document with every field of the schema set, strings that need quoting, per-row sources.
ProfileDocument everything() {
  ProfileDocument doc;
  config::HardwareProfile& p = doc.profile;
  p.name = "round-trip: every field";
  p.gpu.name = "NVIDIA \"Quoted\" GPU \\ 80GB";
  p.gpu.sm_count = 132;
  p.gpu.clock_hz = 1.98e9;
  p.gpu.peak_flops_per_s = {{Dtype::kBf16, 989.5e12}, {Dtype::kFp8, 1979e12}, {Dtype::kFp32, 67e12}};
  p.gpu.hbm_capacity_bytes = 80.0 * (1ULL << 30);
  p.gpu.hbm_bandwidth_bytes_per_s = 3.35e12;
  p.host_link = {5, 55.23e9, 54.1e9, 2.15e-6};
  p.host_memory_bytes = 2e12;
  p.compute = {
      0.8123, 0.5, 0.3456, 0.9, 2.345e-6, 9.87e-6, 0.123, 0.7654, config::FusedAttentionKernel::kWgmma};
  p.runtime_memory = config::RuntimeMemory{612.5e6, 688e6, 469e6, 29.3e6};
  // Spread keys: all three, none, and each alone.
  p.gemm_samples = {{Dtype::kBf16, 4096, 4096, 8192, 1.234e-3, {1.201e-3, 1.302e-3, 10}},
                    {Dtype::kFp8, 16, 32, 48, 3.3e-6}};
  p.attention_samples = {{config::AttentionPass::kBackward,
                          true,
                          Dtype::kBf16,
                          2,
                          8,
                          2,
                          65536,
                          65536,
                          128,
                          0.2345,
                          {0.2301, 0, 0}}};
  p.collective_samples = {{CollectiveKind::kAllReduce, 8, 1, 8, 1.2e-5, {0, 1.35e-5, 0}, std::nullopt},
                          {CollectiveKind::kAllGather, 16, 2, 1 << 30, 0.0123, {0, 0, 20}, std::nullopt},
                          {CollectiveKind::kBarrier, 8, 1, 0, 2.2e-5, {}, std::nullopt}};
  p.collective_fits = {{CollectiveKind::kAllReduce, 8, 1, 8, 92682, 1.2e-5, 40.5e9, std::nullopt}};
  p.copy_samples = {{config::CopyDirection::kDeviceToHost, 4, 1 << 20, 8.1e-5, {8.05e-5, 8.3e-5, 5}}};
  p.provenance = {config::ProvenanceKind::kMeasured,
                  "2026-11-29T12:00:00Z",
                  "trainsim 0.1.0 (git abc)",
                  "trainsim calibrate run --out \"x y.yaml\"",
                  "first line: with a colon\n\n  indented # not a comment",
                  {"580.159.04", "13.0", "13.1.0", "2.28.9", "GCC 12.2.0", "wgmma"},
                  {"Intel(R) Xeon(R) \"Quoted\" CPU @ 2.00GHz", "node01"}};
  p.sources = {{"gpu", "datasheet"},
               {"host_link", "measured"},
               {"host_memory", "queried"},
               {"compute", "measured"},
               {"runtime_memory", "measured: cudaMemGetInfo"},
               {"gemm_samples", "measured"},
               {"attention_samples", "measured"},
               {"collective_samples[0]", "measured"},
               {"collective_samples[1]", "imported: all_gather_perf.log"},
               {"collective_samples[2]", "measured: barrier"},
               {"collective_fits", "fitted"},
               {"copy_samples", "measured"}};
  doc.header = {"a header line", "", "another: with a colon"};
  doc.gemm_comments = {"cv 1.2%", ""};
  doc.collective_fit_comments = {"12 sizes, max error 1.0%"};
  return doc;
}

TEST(ProfileWriter, EveryFieldRoundTripsThroughTheSimulatorsLoader) {
  const ProfileDocument doc = everything();
  const std::filesystem::path file = scratch_dir() / "everything.yaml";
  write_profile(file, doc, false);
  const config::HardwareProfile loaded = config::load_hardware(file);
  testing::expect_same_profile(loaded, doc.profile);
  const std::string text = read_file(file);
  EXPECT_NE(text.find("# a header line\n#\n# another: with a colon\n"), std::string::npos);
  EXPECT_NE(text.find("time: 1234us, min: 1201us, p90: 1302us, repetitions: 10}  # cv 1.2%\n"),
            std::string::npos);
  EXPECT_NE(text.find("k: 48, time: 3.3us}\n"), std::string::npos) << "no spread keys when unrecorded";
  EXPECT_NE(text.find("  software:\n    driver: \"580.159.04\"\n    cuda_runtime: \"13.0\"\n"
                      "    blas: \"13.1.0\"\n    collectives: \"2.28.9\"\n    compiler: \"GCC 12.2.0\"\n"
                      "    attention_kernel: \"wgmma\"\n"
                      "  host:\n    cpu: \"Intel(R) Xeon(R) \\\"Quoted\\\" CPU @ 2.00GHz\"\n"
                      "    name: \"node01\"\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("bus_bandwidth: 40.5GB/s}  # 12 sizes"), std::string::npos);
  EXPECT_NE(text.find("runtime_memory:\n  context: 612.5MB\n"), std::string::npos) << text;
}

TEST(ProfileWriter, RuntimeMemoryWithoutFiguresStaysGiven) {
  ProfileDocument doc = everything();
  doc.profile.runtime_memory = config::RuntimeMemory{};
  doc.profile.sources.erase("runtime_memory");
  const std::filesystem::path file = scratch_dir() / "runtime-memory-zero.yaml";
  write_profile(file, doc, false);
  EXPECT_NE(read_file(file).find("runtime_memory: {}\n"), std::string::npos);
  testing::expect_same_profile(config::load_hardware(file), doc.profile);
}

TEST(ProfileWriter, EveryShippedProfileRoundTrips) {
  for (const auto& entry :
       std::filesystem::directory_iterator(testing::source_dir() / "calibrate/profiles")) {
    if (entry.path().extension() != ".yaml") continue;
    SCOPED_TRACE(entry.path().string());
    ProfileDocument doc;
    doc.profile = config::load_hardware(entry.path());
    const std::filesystem::path file = scratch_dir() / entry.path().filename();
    write_profile(file, doc, false);
    testing::expect_same_profile(config::load_hardware(file), doc.profile);
  }
}

TEST(ProfileWriter, UnknownSoftwareAndHostAreLeftOut) {
  ProfileDocument doc = everything();
  doc.profile.provenance.software = {"", "", "", "", "GCC 12.2.0", ""};
  doc.profile.provenance.host = {};
  const std::string yaml = profile_yaml(doc);
  EXPECT_NE(yaml.find("  software:\n    compiler: \"GCC 12.2.0\"\n  notes:"), std::string::npos) << yaml;
  EXPECT_EQ(yaml.find("  host:"), std::string::npos) << yaml;
  doc.profile.provenance.software = {};
  EXPECT_EQ(profile_yaml(doc).find("software:"), std::string::npos);
}

TEST(ProfileWriter, UnitsInEveryValue) {
  const std::string yaml = profile_yaml(everything());
  for (const char* expected : {"clock: 1.98GHz", "bf16: 989.5TFLOP/s", "capacity: 80GiB",
                               "bandwidth: 3.35TB/s", "h2d_bandwidth: 55.23GB/s", "latency: 2.15us",
                               "kernel_launch: 2345ns", "bytes: 1GiB", "max_bytes: 92682B", "bytes: 0B"}) {
    EXPECT_NE(yaml.find(expected), std::string::npos) << expected;
  }
}

TEST(ProfileWriter, ProfilesAreImmutable) {
  const std::filesystem::path dir = scratch_dir();
  const std::filesystem::path file = dir / "p.yaml";
  ProfileDocument doc = everything();
  write_profile(file, doc, false);
  const std::string first = read_file(file);
  struct stat info {};
  ASSERT_EQ(stat(file.c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0222, 0u) << "written read-only";

  doc.profile.name = "second";
  EXPECT_THROW(write_profile(file, doc, false), ProfileExistsError);
  EXPECT_EQ(read_file(file), first);
  write_profile(file, doc, true);  // --force
  EXPECT_EQ(config::load_hardware(file).name, "second");
  size_t entries = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir)) ++entries;
  EXPECT_EQ(entries, 1u) << "no temporary file left behind";
}

TEST(ProfileWriter, UnwritableDirectoryFailsCleanly) {
  const std::filesystem::path file = scratch_dir() / "missing-dir" / "p.yaml";
  EXPECT_THROW(write_profile(file, everything(), false), std::runtime_error);
  EXPECT_FALSE(std::filesystem::exists(file));
}

TEST(ContentHash, DetectsAnyEdit) {
  const std::string text = profile_file_text(everything());
  HashCheck check = check_content_hash(text);
  EXPECT_TRUE(check.ok());
  EXPECT_EQ(check.recorded.rfind("fnv1a64:", 0), 0u);
  std::string edited = text;
  edited[edited.find("0.8123")] = '9';
  check = check_content_hash(edited);
  EXPECT_TRUE(check.has_hash);
  EXPECT_FALSE(check.ok());
  EXPECT_FALSE(check_content_hash("schema_version: 1\nname: x\n").has_hash);
}

TEST(ProfileWriter, ANumberWithoutASourceIsRefusedByTheLoader) {
  ProfileDocument doc = everything();
  doc.profile.sources.erase("copy_samples");
  const std::filesystem::path file = scratch_dir() / "uncited.yaml";
  write_profile(file, doc, false);
  try {
    config::load_hardware(file);
    FAIL() << "loaded a profile with an uncited table";
  } catch (const config::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("copy_samples: no source for this section"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace trainsim::calibrate
