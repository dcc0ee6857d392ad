// Every sweep file shipped under scenarios/sweeps/ loads and expands, and its base scenario with
// the first point's settings loads.
#include <filesystem>

#include <gtest/gtest.h>

#include "sim/sweep/expand.h"

namespace trainsim::sweep {
namespace {

TEST(ShippedSweeps, EveryFileExpands) {
  size_t files = 0;
  for (const auto& entry :
       std::filesystem::directory_iterator(std::filesystem::path(TRAINSIM_SOURCE_DIR) / "scenarios/sweeps")) {
    if (entry.path().extension() != ".yaml") continue;
    SCOPED_TRACE(entry.path().string());
    ++files;
    const SweepFile s = load_sweep(entry.path());
    const ExpandedSweep e = expand(s);
    EXPECT_GT(e.points.size(), 0u);
    EXPECT_NO_THROW(load_point_scenario(s, e.points.back().settings(s)));
  }
  EXPECT_GE(files, 2u);
}

}  // namespace
}  // namespace trainsim::sweep
