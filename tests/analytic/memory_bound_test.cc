// The bound `run` refuses a plan with before building any graph, and the changes it names.
#include "sim/analytic/memory_bound.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/workload/workload_test_util.h"

namespace trainsim::analytic {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// Llama-3 8B data-parallel over 8 GPUs of 80 GiB: Adam's 16 bytes per parameter (121 GiB) do not fit
// a GPU; every ZeRO stage shards enough of them over the 8 ranks, recomputation does not help.
config::Scenario llama8b_dp8(int zero_stage) {
  testing::PlanSpec plan;
  plan.dp = 8;
  plan.zero = zero_stage;
  plan.recompute = config::Recompute::kFull;
  config::Scenario s = testing::make_scenario("llama3-8b", 8, 1, plan);
  s.cluster.hardware.gpu.hbm_capacity_bytes = 80 * kGiB;
  return s;
}

TEST(MemoryBound, NamesTheChangesThatPassIt) {
  const config::Scenario s = llama8b_dp8(0);
  const MemoryLowerBound bound = memory_lower_bound(s);
  EXPECT_NEAR(bound.model_state.optimizer / bound.model_state.weights, 6.0, 1e-9);  // 12 of 2 bytes
  EXPECT_GT(bound.total(), s.usable_hbm_bytes());
  const std::string why = memory_bound_refusal(s);
  EXPECT_THAT(why, HasSubstr("more than the 76.00 GiB usable (the GPU's 80.00 GiB less the 5% headroom"));
  EXPECT_THAT(why, HasSubstr("Changes whose bound would be within it: parallelism.zero_stage=1 ("));
  EXPECT_THAT(why, HasSubstr("parallelism.zero_stage=3 ("));
  EXPECT_THAT(why, Not(HasSubstr("parallelism.recompute=full")));  // it already recomputes
  EXPECT_EQ(memory_bound_refusal(llama8b_dp8(3)), "");
}

// The headroom moves the line: a bound just below the capacity passes only without it.
TEST(MemoryBound, HonoursTheHeadroom) {
  config::Scenario s = llama8b_dp8(1);
  s.cluster.hardware.gpu.hbm_capacity_bytes = memory_lower_bound(s).total() * 1.02;
  EXPECT_NE(memory_bound_refusal(s), "");
  s.training.memory_headroom = 0;
  EXPECT_EQ(memory_bound_refusal(s), "");
}

}  // namespace
}  // namespace trainsim::analytic
