#include "tests/sweep/sweep_test_util.h"

#include <fstream>
#include <stdexcept>
#include <stdlib.h>

namespace trainsim::testing {

ScratchDir::ScratchDir() {
  std::string pattern = (std::filesystem::temp_directory_path() / "trainsim-sweep-test-XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  path_ = pattern;
}

ScratchDir::~ScratchDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

std::filesystem::path write_file(const ScratchDir& dir, const std::string& name, std::string body) {
  const std::string scenarios = std::string(TRAINSIM_SOURCE_DIR) + "/scenarios";
  for (size_t at = body.find("$SCENARIOS"); at != std::string::npos; at = body.find("$SCENARIOS", at)) {
    body.replace(at, 10, scenarios);
  }
  const std::filesystem::path path = dir.path() / name;
  std::ofstream(path) << body;
  return path;
}

}  // namespace trainsim::testing
