// Helpers of the sweep tests: sweep files written to a scratch directory.
#ifndef TRAINSIM_TESTS_SWEEP_SWEEP_TEST_UTIL_H_
#define TRAINSIM_TESTS_SWEEP_SWEEP_TEST_UTIL_H_

#include <filesystem>
#include <string>

namespace trainsim::testing {

// A fresh empty directory under the system's temporary directory, removed by the destructor.
class ScratchDir {
 public:
  ScratchDir();
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// Writes `body` to DIR/name and returns the path. "$SCENARIOS" in `body` becomes the absolute path of
// the repository's scenarios/ directory.
std::filesystem::path write_file(const ScratchDir& dir, const std::string& name, std::string body);

}  // namespace trainsim::testing

#endif  // TRAINSIM_TESTS_SWEEP_SWEEP_TEST_UTIL_H_
