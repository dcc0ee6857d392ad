// Every shipped input file is valid: the examples are part of the manual.
#include <fstream>
#include <string>

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

// A citation written as a plain YAML scalar ends at " #" (a comment): "issue #964" must be quoted.
TEST(ShippedInputs, EveryCitationLoadsWhole) {
  for (const auto& file : yaml_files("calibrate/profiles")) {
    SCOPED_TRACE(file.string());
    const HardwareProfile h = load_hardware(file);
    std::ifstream in(file);
    bool in_sources = false;
    int checked = 0;
    for (std::string line; std::getline(in, line);) {
      if (line.rfind("sources:", 0) == 0) {
        in_sources = true;
        continue;
      }
      const size_t colon = line.find(": ");
      if (!in_sources || line.rfind("  ", 0) != 0 || colon == std::string::npos) continue;
      const std::string key = line.substr(2, colon - 2);
      std::string text = line.substr(colon + 2);
      if (text.size() >= 2 && text.front() == '"' && text.back() == '"' &&
          text.find('\\') == std::string::npos) {
        text = text.substr(1, text.size() - 2);
      }
      ASSERT_EQ(h.sources.count(key), 1u) << key;
      EXPECT_EQ(h.sources.at(key), text) << key;
      ++checked;
    }
    EXPECT_GT(checked, 0);
  }
}

// calibrate/README.md's example: a profile that extends a shipped one replaces one runtime figure.
TEST(ShippedInputs, AnExtendingProfileReplacesOneRuntimeFigure) {
  const trainsim::testing::ScratchDir dir;
  const std::filesystem::path shipped =
      trainsim::testing::source_dir() / "calibrate/profiles/a100-sxm4-80gb.yaml";
  dir.write("a100-four-p2p-channels.yaml",
            "schema_version: 1\nname: a100-four-p2p-channels\nextends: " + shipped.string() +
                "\nruntime_memory:\n  p2p_peer_in_node: 60MB\nsources:\n"
                "  runtime_memory.p2p_peer_in_node: \"assumption: "
                "NCCL_NCHANNELS_PER_PEER=4, 4 channels x 15 MB\"\n");
  const HardwareProfile base = load_hardware(shipped);
  const HardwareProfile h = load_hardware(dir.path() / "a100-four-p2p-channels.yaml");
  ASSERT_TRUE(h.runtime_memory && base.runtime_memory);
  EXPECT_DOUBLE_EQ(h.runtime_memory->p2p_peer_in_node_bytes, 60e6);
  EXPECT_DOUBLE_EQ(h.runtime_memory->context_bytes, base.runtime_memory->context_bytes);
  EXPECT_DOUBLE_EQ(h.runtime_memory->collective_communicator_bytes,
                   base.runtime_memory->collective_communicator_bytes);
  EXPECT_EQ(h.source_of("runtime_memory.context"), base.source_of("runtime_memory.context"));
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
