// Every shipped input file is valid: the examples are part of the manual.
#include <gtest/gtest.h>

#include "sim/config/loader.h"
#include "tests/config/config_test_util.h"

namespace trainsim::config {
namespace {

std::vector<std::filesystem::path> yaml_files(const std::string& folder) {
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(trainsim::testing::source_dir() / folder)) {
    if (entry.path().extension() == ".yaml") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

TEST(ShippedInputs, EveryScenarioLoads) {
  const auto files = yaml_files("scenarios");
  ASSERT_GE(files.size(), 6u);
  for (const auto& file : files) {
    SCOPED_TRACE(file.string());
    EXPECT_NO_THROW({
      try {
        load_scenario(file);
      } catch (const ConfigError& e) {
        ADD_FAILURE() << e.what();
      }
    });
  }
}

TEST(ShippedInputs, EveryTopologyLoads) {
  for (const auto& file : yaml_files("topologies")) {
    try {
      const Topology t = load_topology(file);
      EXPECT_GT(t.total_gpus(), 0) << file;
    } catch (const ConfigError& e) {
      ADD_FAILURE() << e.what();
    }
  }
}

TEST(ShippedInputs, EveryHardwareProfileLoadsWithSources) {
  for (const auto& file : yaml_files("calibrate/profiles")) {
    try {
      const HardwareProfile h = load_hardware(file);
      EXPECT_TRUE(h.peak_flops_per_s(Dtype::kBf16).has_value()) << file;
      EXPECT_FALSE(h.source_of("gpu.hbm.capacity").empty()) << file;
      EXPECT_EQ(h.content_hash.rfind("fnv1a64:", 0), 0u);
    } catch (const ConfigError& e) {
      ADD_FAILURE() << e.what();
    }
  }
}

TEST(ShippedInputs, FpdtHeadlineScenario) {
  const Scenario s =
      load_scenario(trainsim::testing::source_dir() / "scenarios/05-llama3-8b-fpdt-2m-4xa100.yaml");
  EXPECT_EQ(s.model.seq_len, 2 * 1024 * 1024);
  EXPECT_EQ(s.parallelism.sp, 4);
  EXPECT_EQ(s.fpdt_chunks(), 32);
  EXPECT_EQ(s.cluster.gpus, 4);
}

}  // namespace
}  // namespace trainsim::config
