#include "tests/calibrate/test_util.h"

#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

namespace trainsim::calibrate::testing {

std::filesystem::path scratch_dir() {
  const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
  const std::filesystem::path dir = std::filesystem::path(TRAINSIM_BINARY_DIR) / "tests" / "calibrate" /
                                    "scratch" / (std::string(info->test_suite_name()) + "." + info->name());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

void write_file(const std::filesystem::path& path, const std::string& text) {
  std::filesystem::remove(path);
  std::ofstream out(path, std::ios::binary);
  out << text;
}

}  // namespace trainsim::calibrate::testing
