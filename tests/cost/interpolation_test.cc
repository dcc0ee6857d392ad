#include "sim/cost/interpolation.h"

#include <gtest/gtest.h>

namespace trainsim::cost {
namespace {

TEST(Interpolation, ExactMatchAndSymmetricMidpoint) {
  const std::vector<Sample3> samples = {{{1, 1, 1}, 0.2}, {{4, 1, 1}, 0.6}};
  EXPECT_DOUBLE_EQ(interpolate_log3(samples, {4, 1, 1}).value, 0.6);
  const Interpolated mid = interpolate_log3(samples, {2, 1, 1});
  EXPECT_DOUBLE_EQ(mid.value, 0.4);
  EXPECT_FALSE(mid.extrapolated);
  EXPECT_TRUE(interpolate_log3(samples, {8, 1, 1}).extrapolated);
  EXPECT_TRUE(interpolate_log3(samples, {2, 2, 1}).extrapolated);
  EXPECT_EQ(mid.range, "[1, 4] x [1, 1] x [1, 1]");
}

TEST(Interpolation, UsesTheNearestFourOnly) {
  std::vector<Sample3> samples;
  for (int i = 0; i < 4; ++i) samples.push_back({{static_cast<double>(1 << i), 1, 1}, 1.0});
  samples.push_back({{1024, 1, 1}, 100.0});  // far away: must not pull the value
  EXPECT_DOUBLE_EQ(interpolate_log3(samples, {3, 1, 1}).value, 1.0);
}

}  // namespace
}  // namespace trainsim::cost
