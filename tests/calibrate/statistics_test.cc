#include "calibrate/statistics.h"

#include <cmath>
#include <stdexcept>

#include <gtest/gtest.h>

#include "calibrate/backend.h"

namespace trainsim::calibrate {
namespace {

TEST(Statistics, SummarizesRepetitions) {
  const Summary s = summarize({5e-6, 1e-6, 3e-6, 2e-6, 4e-6});
  EXPECT_EQ(s.repetitions, 5);
  EXPECT_DOUBLE_EQ(s.median_s, 3e-6);
  EXPECT_DOUBLE_EQ(s.mean_s, 3e-6);
  EXPECT_DOUBLE_EQ(s.min_s, 1e-6);
  EXPECT_DOUBLE_EQ(s.max_s, 5e-6);
  EXPECT_DOUBLE_EQ(s.p10_s, 1e-6);
  EXPECT_DOUBLE_EQ(s.p90_s, 5e-6);
  EXPECT_NEAR(s.cv, std::sqrt(2.0) / 3.0, 1e-12);
}

TEST(Statistics, MedianOfEvenCountIsTheMiddleMean) { EXPECT_DOUBLE_EQ(median({4, 1, 3, 2}), 2.5); }

TEST(Statistics, RefusesEmptyAndNonPositive) {
  EXPECT_THROW(summarize({}), std::invalid_argument);
  EXPECT_THROW(summarize({1e-6, 0}), std::invalid_argument);
  EXPECT_THROW(summarize({1e-6, std::nan("")}), std::invalid_argument);
}

TEST(Timing, RunsPerRepetitionFillTheMinimumTime) {
  TimingPolicy policy;
  policy.min_repetition_s = 1e-3;
  policy.max_runs_per_repetition = 100;
  EXPECT_EQ(runs_per_repetition(1e-4, policy), 10);
  EXPECT_EQ(runs_per_repetition(1e-6, policy), 100);  // capped
  EXPECT_EQ(runs_per_repetition(5e-3, policy), 1);
  policy.min_repetition_s = 0;
  EXPECT_EQ(runs_per_repetition(1e-6, policy), 1);
}

TEST(Timing, RotationOutgrowsTheCacheWithinTheBudget) {
  EXPECT_EQ(rotation_sets(1 << 20, 50 << 20, 1 << 30), 100);  // 2 x 50 MiB / 1 MiB
  EXPECT_EQ(rotation_sets(256 << 20, 50 << 20, 1 << 30), 1);  // already larger than the cache
  EXPECT_EQ(rotation_sets(1 << 20, 50 << 20, 10 << 20), 10);  // the budget binds
  EXPECT_EQ(rotation_sets(8, 1 << 30, 1ULL << 40), 16384);    // the cap binds
}

}  // namespace
}  // namespace trainsim::calibrate
