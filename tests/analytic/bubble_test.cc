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

// DualPipe's (PP/2 - 1)(F&B + B - 3W) on 2p half-stages (DeepSeek-V3 Table 2): with F = B = W a
// third of 1F1B's bubble, as ZB-H1's; more when the input gradients dominate.
TEST(PipelineBubble, DualPipeV) {
  EXPECT_DOUBLE_EQ(pipeline_bubble_fraction(config::Schedule::kDualPipeV, 8, 64, 2), 7.0 / 64 / 3);
  EXPECT_DOUBLE_EQ(pipeline_bubble_fraction(config::Schedule::kDualPipeV, 8, 64, 2, {0.25, 0.25}),
                   7.0 / 64 * (0.25 + 2 * 0.5 - 0.25) / 2);
}

}  // namespace
}  // namespace trainsim::analytic
