// The ideal pipeline bubble of Narayanan et al. 2021 (ground-truth.md A.7).
#include "sim/analytic/bubble.h"

#include <gtest/gtest.h>

namespace trainsim::analytic {
namespace {

TEST(PipelineBubble, NarayananFormulas) {
  EXPECT_DOUBLE_EQ(pipeline_bubble_fraction(config::Schedule::kOneFOneB, 8, 64, 1), 7.0 / 64);
  EXPECT_DOUBLE_EQ(pipeline_bubble_fraction(config::Schedule::kGpipe, 8, 64, 1), 7.0 / 64);
  EXPECT_DOUBLE_EQ(pipeline_bubble_fraction(config::Schedule::kInterleaved, 8, 64, 3), 7.0 / 64 / 3);
  EXPECT_DOUBLE_EQ(pipeline_bubble_fraction(config::Schedule::kOneFOneB, 1, 64, 1), 0);
}

}  // namespace
}  // namespace trainsim::analytic
