#include "tests/config/config_test_util.h"

#include <fstream>

#include <gtest/gtest.h>

#include "sim/config/diagnostics.h"
#include "sim/config/emit.h"
#include "sim/config/loader.h"

namespace trainsim::testing {

ScratchDir::ScratchDir() {
  const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
  path_ = std::filesystem::temp_directory_path() / (std::string("trainsim-") + info->test_suite_name() + "-" +
                                                    info->name() + "-" + std::to_string(::getpid()));
  std::filesystem::remove_all(path_);
  std::filesystem::create_directories(path_);
  previous_cwd_ = std::filesystem::current_path();
  std::filesystem::current_path(path_);
}

ScratchDir::~ScratchDir() {
  std::filesystem::current_path(previous_cwd_);
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

std::filesystem::path ScratchDir::write(const std::string& name, const std::string& text) const {
  const std::filesystem::path file = path_ / name;
  std::filesystem::create_directories(file.parent_path());
  std::ofstream(file) << text;
  return file;
}

std::vector<std::string> errors_of(const std::function<void()>& load) {
  try {
    load();
  } catch (const config::ConfigError& e) {
    std::vector<std::string> out;
    for (const config::Diagnostic& d : e.diagnostics()) out.push_back(d.to_string());
    return out;
  }
  return {};
}

std::filesystem::path source_dir() { return TRAINSIM_SOURCE_DIR; }

void write_minimal_cluster(const ScratchDir& dir) {
  dir.write("topo.yaml", R"(schema_version: 1
name: tiny
node:
  gpus: 8
  intra: {kind: nvswitch, bandwidth: 300GB/s, latency: 1us}
  pcie: {bandwidth: 32GB/s, latency: 1us}
  nics: {count: 8, bandwidth: 200Gbps, latency: 1us}
  host_memory: 1TiB
fabric:
  kind: fat-tree
  nodes: 4
  link: {bandwidth: 200Gbps, latency: 0.1us}
)");
  dir.write("hw.yaml", R"(schema_version: 1
name: gpu
gpu:
  name: Test GPU
  peak_flops: {bf16: 312TFLOP/s, fp16: 312TFLOP/s}
  hbm: {capacity: 80GiB, bandwidth: 2TB/s}
host_link: {h2d_bandwidth: 25GB/s, d2h_bandwidth: 25GB/s}
provenance: {kind: cited}
sources:
  gpu: test datasheet
  host_link: test measurement
)");
}

ScenarioSectionTest::ScenarioSectionTest(std::string key) : key_(std::move(key)) {
  write_minimal_cluster(dir_);
}

void ScenarioSectionTest::write(const std::string& value) {
  dir_.write("s.yaml",
             "schema_version: 1\nname: s\nmodel: {preset: llama3-8b}\ntraining: {global_batch: 16}\n"
             "cluster: {topology: topo.yaml, hardware: hw.yaml, gpus: 16}\n" +
                 key_ + ": " + value + "\n");
}

config::Scenario ScenarioSectionTest::load(const std::string& value) {
  write(value);
  return config::load_scenario("s.yaml");
}

std::vector<std::string> ScenarioSectionTest::errors(const std::string& value) {
  write(value);
  return errors_of([] { config::load_scenario("s.yaml"); });
}

void ScenarioSectionTest::expect_shown_yaml_loads_back(const config::Scenario& scenario) {
  const std::string yaml = config::to_yaml(scenario);
  dir_.write("shown.yaml", yaml);
  EXPECT_EQ(config::to_yaml(config::load_scenario("shown.yaml")), yaml);
  EXPECT_NE(yaml.find(key_ + ":"), std::string::npos);
}

}  // namespace trainsim::testing
