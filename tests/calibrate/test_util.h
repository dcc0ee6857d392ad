// Helpers of the calibrate tests: scratch directories and file access.
#ifndef TRAINSIM_TESTS_CALIBRATE_TEST_UTIL_H_
#define TRAINSIM_TESTS_CALIBRATE_TEST_UTIL_H_

#include <filesystem>
#include <string>

namespace trainsim::calibrate::testing {

// A fresh, empty directory for the running test (removed and recreated), under the build tree.
std::filesystem::path scratch_dir();

std::string read_file(const std::filesystem::path& path);
// Writes `text` to `path` (replacing it, even when read-only).
void write_file(const std::filesystem::path& path, const std::string& text);

inline std::filesystem::path source_dir() { return TRAINSIM_SOURCE_DIR; }
inline std::filesystem::path fixtures_dir() { return source_dir() / "tests" / "calibrate" / "fixtures"; }

}  // namespace trainsim::calibrate::testing

#endif  // TRAINSIM_TESTS_CALIBRATE_TEST_UTIL_H_
