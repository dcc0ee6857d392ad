#include "sim/measured/activity.h"

#include <gtest/gtest.h>

namespace trainsim::measured {
namespace {

TEST(ProfileStep, GivesEverySecondToOneBucketInPrecedence) {
  // compute [0, 2], communication [1, 3] (exposed [2, 3]), host copy [2.5, 4] (exposed [3, 4]),
  // nothing [4, 5].
  const StepProfile p = profile_step(
      {{ActivityClass::kGemm, 0, 2}, {ActivityClass::kAllReduce, 1, 3}, {ActivityClass::kHostCopy, 2.5, 4}},
      0, 5);
  EXPECT_DOUBLE_EQ(p.step_s, 5);
  EXPECT_DOUBLE_EQ(p.compute_s, 2);
  EXPECT_DOUBLE_EQ(p.exposed_comm_s, 1);
  EXPECT_DOUBLE_EQ(p.exposed_copy_s, 1);
  EXPECT_DOUBLE_EQ(p.idle_s, 1);
  EXPECT_DOUBLE_EQ(p.of(ActivityClass::kAllReduce).time_s, 2);
  EXPECT_DOUBLE_EQ(p.of(ActivityClass::kHostCopy).count, 1);
}

TEST(ProfileStep, CountsOverlappingKernelsOnceInTheBreakdownAndEachInItsClass) {
  const StepProfile p = profile_step({{ActivityClass::kGemm, 0, 3}, {ActivityClass::kMemory, 1, 2}}, 0, 4);
  EXPECT_DOUBLE_EQ(p.compute_s, 3);
  EXPECT_DOUBLE_EQ(p.idle_s, 1);
  EXPECT_DOUBLE_EQ(p.of(ActivityClass::kGemm).time_s + p.of(ActivityClass::kMemory).time_s, 4);
}

TEST(ProfileStep, ClipsToTheStepAndDropsWhatLiesOutside) {
  const StepProfile p = profile_step({{ActivityClass::kGemm, -1, 1},
                                      {ActivityClass::kGemm, 3, 6},
                                      {ActivityClass::kAttention, 7, 8},
                                      {ActivityClass::kAttention, -2, 0}},
                                     0, 4);
  EXPECT_DOUBLE_EQ(p.of(ActivityClass::kGemm).time_s, 2);
  EXPECT_DOUBLE_EQ(p.of(ActivityClass::kGemm).count, 2);
  EXPECT_DOUBLE_EQ(p.of(ActivityClass::kAttention).count, 0);
  EXPECT_DOUBLE_EQ(p.compute_s, 2);
  EXPECT_DOUBLE_EQ(p.idle_s, 2);
}

TEST(MeanProfile, AveragesEveryField) {
  const StepProfile a = profile_step({{ActivityClass::kGemm, 0, 1}}, 0, 2);
  const StepProfile b = profile_step({{ActivityClass::kGemm, 0, 3}, {ActivityClass::kSendRecv, 3, 4}}, 0, 4);
  const StepProfile m = mean_profile({a, b});
  EXPECT_DOUBLE_EQ(m.step_s, 3);
  EXPECT_DOUBLE_EQ(m.compute_s, 2);
  EXPECT_DOUBLE_EQ(m.exposed_comm_s, 0.5);
  EXPECT_DOUBLE_EQ(m.idle_s, 0.5);
  EXPECT_DOUBLE_EQ(m.of(ActivityClass::kGemm).count, 1);
  EXPECT_DOUBLE_EQ(m.of(ActivityClass::kSendRecv).count, 0.5);
}

TEST(ActivityClass, NamesAndGroups) {
  EXPECT_EQ(to_string(ActivityClass::kSendRecv), "send/recv, all-to-all");
  EXPECT_TRUE(is_compute(ActivityClass::kOptimizer));
  EXPECT_FALSE(is_compute(ActivityClass::kAllReduce));
  EXPECT_TRUE(is_communication(ActivityClass::kSendRecv));
  EXPECT_FALSE(is_communication(ActivityClass::kHostCopy));
}

}  // namespace
}  // namespace trainsim::measured
