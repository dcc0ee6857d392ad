// The checked-in nccl-tests fixtures are exactly what nccl_tests_writer.cc writes (so they are
// logs the project writes itself, from known models). TRAINSIM_REGENERATE_FIXTURES=1 rewrites them.
#include <cstdlib>

#include <gtest/gtest.h>

#include "tests/calibrate/nccl_tests_writer.h"
#include "tests/calibrate/test_util.h"

namespace trainsim::calibrate {
namespace {

TEST(Fixtures, AreWhatTheWriterWrites) {
  const bool regenerate = std::getenv("TRAINSIM_REGENERATE_FIXTURES") != nullptr;
  for (const testing::Fixture& f : testing::fixtures()) {
    const std::filesystem::path path = testing::fixtures_dir() / f.file;
    const std::string text = f.json ? testing::nccl_tests_json(f.run) : testing::nccl_tests_text(f.run);
    if (regenerate) testing::write_file(path, text);
    EXPECT_EQ(testing::read_file(path), text)
        << path
        << " differs from nccl_tests_writer.cc's output; rerun "
           "with TRAINSIM_REGENERATE_FIXTURES=1 if the change is intended";
  }
}

}  // namespace
}  // namespace trainsim::calibrate
