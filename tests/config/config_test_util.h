// Helpers for config tests: write YAML files into a scratch directory and collect the diagnostics
// a loader reports.
#ifndef TRAINSIM_TESTS_CONFIG_CONFIG_TEST_UTIL_H_
#define TRAINSIM_TESTS_CONFIG_CONFIG_TEST_UTIL_H_

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "sim/config/scenario.h"

namespace trainsim::testing {

// A fresh directory per test; the working directory is set to it so messages show bare file names.
class ScratchDir {
 public:
  ScratchDir();
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  // Writes `text` to `name` (relative to the directory, parents created) and returns its path.
  std::filesystem::path write(const std::string& name, const std::string& text) const;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
  std::filesystem::path previous_cwd_;
};

// Runs `load` and returns the rendered diagnostics of the ConfigError it throws (empty when it
// does not throw).
std::vector<std::string> errors_of(const std::function<void()>& load);

// The repository root (where scenarios/ and topologies/ live).
std::filesystem::path source_dir();

// A minimal valid topology and hardware profile, written as topo.yaml and hw.yaml.
void write_minimal_cluster(const ScratchDir& dir);

// Tests of one optional scenario section: s.yaml is Llama-3-8B (global batch 16) on 16 GPUs, two
// nodes of 8, of the minimal cluster, with `key: value` on line 6.
class ScenarioSectionTest : public ::testing::Test {
 protected:
  explicit ScenarioSectionTest(std::string key);
  // The scenario with `value` as the section, and the rendered diagnostics of loading it.
  config::Scenario load(const std::string& value);
  std::vector<std::string> errors(const std::string& value);
  // Writes the scenario's to_yaml as shown.yaml and expects it to load back to the same YAML.
  void expect_shown_yaml_loads_back(const config::Scenario& scenario);

  ScratchDir dir_;

 private:
  void write(const std::string& value);
  std::string key_;
};

}  // namespace trainsim::testing

#endif  // TRAINSIM_TESTS_CONFIG_CONFIG_TEST_UTIL_H_
