// Fitting a stack profile: the fixture's cases were made with gemm_fraction 0.8 and memory_fraction
// 0.7, and a fit on them must find those again; validation cases are never fitted on; fits that mean
// nothing are refused; the written profile loads and names everything it was fitted on.
#include "sim/validate/stack_fit.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "sim/config/loader.h"

namespace trainsim::validate {
namespace {

using config::StackParameter;
using ::testing::HasSubstr;

const std::filesystem::path kFixtures =
    std::filesystem::path(TRAINSIM_SOURCE_DIR) / "tests/validate/fixtures";

StackFitRequest request(std::vector<std::filesystem::path> inputs,
                        std::vector<StackParameter> parameters = {}) {
  StackFitRequest r;
  r.stack_file = kFixtures / "stack-fit/base/stack.yaml";
  r.inputs = std::move(inputs);
  r.parameters = std::move(parameters);
  r.jobs = 2;
  return r;
}

std::string refusal(const StackFitRequest& r) {
  try {
    fit_stack(r);
  } catch (const StackFitError& e) {
    return e.what();
  }
  return "";
}

TEST(StackFit, FindsTheParametersTheCasesWereMadeWithAndWritesAProfileThatLoads) {
  const StackFitRequest r = request({});  // the inputs and parameters the profile records
  const StackFitResult result = fit_stack(r);
  const config::StackProfile& stack = *result.profile.stack;
  EXPECT_NEAR(stack.parameters[StackParameter::kGemmFraction], 0.8, 1e-3);
  EXPECT_NEAR(stack.parameters[StackParameter::kMemoryFraction], 0.7, 1e-3);
  EXPECT_LT(stack.fit->rms_residual, 1e-4);
  EXPECT_GT(stack.fit->sensitivity.at(StackParameter::kGemmFraction), 0);
  ASSERT_EQ(stack.fit->measurements.size(), 4u);  // the two-node case is left out, and says why
  ASSERT_EQ(result.left_out.size(), 1u);
  EXPECT_THAT(result.left_out[0], HasSubstr("fixture-fit-16gpu: a validation case (16 GPUs on nodes of 8)"));
  for (const double r0 : result.residuals_before) EXPECT_LT(r0, -0.2);  // the hardware alone is too fast

  const std::string text = render_stack_profile(r, result);
  const config::HardwareProfile loaded = config::load_hardware_text(text, r.stack_file);
  ASSERT_TRUE(loaded.stack && loaded.stack->fit);
  EXPECT_EQ(loaded.stack->fit->measurements.size(), 4u);
  EXPECT_EQ(loaded.stack->fit->measurements[0].file, "../gpt-125m-b16-m4-s512.yaml");
  EXPECT_EQ(loaded.stack->fit->command, refit_command(r));
  EXPECT_EQ(loaded.stack->fit->inputs, std::vector<std::string>{".."});
  EXPECT_NEAR(loaded.stack->parameters[StackParameter::kGemmFraction], 0.8, 1e-3);
  EXPECT_THAT(text, HasSubstr("# A stack profile for the fit-stack tests"));  // its comments kept
}

TEST(StackFit, RefusesAValidationCaseNamedOnItsOwn) {
  EXPECT_THAT(refusal(request({kFixtures / "stack-fit/gpt-125m-16gpu.yaml"})),
              HasSubstr("case fixture-fit-16gpu refused: a validation case"));
}

TEST(StackFit, RefusesAParameterTheCasesDoNotMove) {
  // One GPU: no collective crosses NVLink.
  EXPECT_THAT(refusal(request({kFixtures / "stack-fit/gpt-125m-b4-m4-s2048.yaml",
                               kFixtures / "stack-fit/gpt-125m-b2-m2-s1024.yaml"},
                              {StackParameter::kGemmFraction, StackParameter::kCollectiveFractionNvlink})),
              HasSubstr("collective_fraction_nvlink does not move any of the 2 cases"));
}

TEST(StackFit, RefusesAParameterThatEndsOnItsBound) {
  EXPECT_THAT(refusal(request({kFixtures / "stack-fit-bound"}, {StackParameter::kGemmFraction})),
              HasSubstr("gemm_fraction ends on its bound (0.3, allowed 0.3 to 1.1)"));
}

TEST(StackFit, RefusesWhatSingleNodeCasesCannotDetermine) {
  EXPECT_THAT(refusal(request({kFixtures / "stack-fit"}, {StackParameter::kCollectiveFractionNetwork})),
              HasSubstr("collective_fraction_network cannot be fitted"));
  EXPECT_THAT(refusal(request({kFixtures / "stack-fit/gpt-125m-b4-m4-s2048.yaml"},
                              {StackParameter::kGemmFraction, StackParameter::kMemoryFraction})),
              HasSubstr("1 calibration case on this stack profile cannot determine 2 parameters"));
}

TEST(StackFit, RefusesAHardwareProfile) {
  StackFitRequest r = request({kFixtures / "stack-fit"});
  r.stack_file = std::filesystem::path(TRAINSIM_SOURCE_DIR) / "calibrate/profiles/a100-sxm4-80gb.yaml";
  EXPECT_THAT(refusal(r), HasSubstr("is a hardware profile, not a stack profile"));
}

}  // namespace
}  // namespace trainsim::validate
