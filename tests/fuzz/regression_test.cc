// Replays every input under tests/fuzz/regressions/<target>/ (inputs that once broke a decoder,
// each named after what it found) and the target's seed inputs (TRAINSIM_FUZZ_SEEDS,
// "target=folder,...", from tests/fuzz/CMakeLists.txt) through the fuzz targets, in the default
// build: a regression crashes the test, escapes as an exception or aborts on a broken property.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "tests/fuzz/targets.h"

namespace trainsim::fuzz {
namespace {

namespace fs = std::filesystem;

// The seed folder of `target` (relative to the source root), from TRAINSIM_FUZZ_SEEDS.
std::string seed_folder(const std::string& target) {
  std::stringstream list(TRAINSIM_FUZZ_SEEDS);
  for (std::string entry; std::getline(list, entry, ',');) {
    if (entry.rfind(target + "=", 0) == 0) return entry.substr(target.size() + 1);
  }
  return "";
}

std::vector<fs::path> inputs_of(const std::string& target) {
  std::vector<fs::path> files;
  const fs::path root(TRAINSIM_SOURCE_DIR);
  for (const fs::path& dir : {root / "tests/fuzz/regressions" / target, root / seed_folder(target)}) {
    if (!fs::is_directory(dir)) continue;
    for (const fs::directory_entry& e : fs::directory_iterator(dir)) {
      if (e.is_regular_file()) files.push_back(e.path());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::string read(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

class FuzzRegression : public testing::TestWithParam<std::string> {};

TEST_P(FuzzRegression, EveryRecordedInputIsHandled) {
  const FuzzTarget* target = find_fuzz_target(GetParam());
  ASSERT_NE(target, nullptr);
  ASSERT_FALSE(seed_folder(GetParam()).empty()) << "no seed folder for " << GetParam();
  const std::vector<fs::path> inputs = inputs_of(GetParam());
  ASSERT_FALSE(inputs.empty()) << "no seeds for " << GetParam();
  for (const fs::path& file : inputs) {
    SCOPED_TRACE(file.string());
    EXPECT_NO_THROW(target->run(read(file)));
  }
}

std::vector<std::string> target_names() {
  std::vector<std::string> names;
  for (const FuzzTarget& t : fuzz_targets()) names.emplace_back(t.name);
  return names;
}

INSTANTIATE_TEST_SUITE_P(Targets, FuzzRegression, testing::ValuesIn(target_names()),
                         [](const testing::TestParamInfo<std::string>& param) { return param.param; });

}  // namespace
}  // namespace trainsim::fuzz
