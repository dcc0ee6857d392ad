// Stack profiles: a hardware profile that extends another and adds a `stack` section of bounded,
// named parameters; what a stack file may set, and what-ifs on its parameters.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "sim/config/loader.h"
#include "tests/config/config_test_util.h"

namespace trainsim::config {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using trainsim::testing::errors_of;
using trainsim::testing::ScratchDir;

class StackProfileTest : public ::testing::Test {
 protected:
  StackProfileTest() { trainsim::testing::write_minimal_cluster(dir_); }
  // stack.yaml extending hw.yaml with `stack_lines` (indented by two) under `stack:` from line 5.
  void write(const std::string& stack_lines, const std::string& more = "") {
    dir_.write("stack.yaml", "schema_version: 1\nextends: hw.yaml\nname: my-stack\nstack:\n" + stack_lines +
                                 more + "sources:\n  stack: test fit\n");
  }
  ScratchDir dir_;
};

TEST_F(StackProfileTest, ParametersDefaultToNeutralAndNamedOnesApply) {
  write("  framework: megatron-lm\n  parameters: {gemm_fraction: 0.85, host_dispatch: 6us}\n");
  const HardwareProfile p = load_hardware("stack.yaml");
  EXPECT_EQ(p.name, "my-stack");
  EXPECT_EQ(p.gpu.name, "Test GPU");  // the hardware profile's, extended
  ASSERT_TRUE(p.stack.has_value());
  EXPECT_EQ(p.stack->hardware_name, "gpu");
  EXPECT_EQ(p.stack->framework, "megatron-lm");
  EXPECT_DOUBLE_EQ(p.stack->parameters[StackParameter::kGemmFraction], 0.85);
  EXPECT_DOUBLE_EQ(p.stack->parameters[StackParameter::kHostDispatch], 6e-6);
  EXPECT_DOUBLE_EQ(p.stack->parameters[StackParameter::kMemoryFraction], 1.0);
  EXPECT_FALSE(p.stack->parameters.neutral());
  EXPECT_FALSE(load_hardware("hw.yaml").stack.has_value());
}

TEST_F(StackProfileTest, TheFitRecordLoads) {
  write(
      "  framework: f\n  parameters: {memory_fraction: 0.7}\n  fit:\n    command: trainsim calibrate "
      "fit-stack "
      "stack.yaml --cases c\n    parameters: [memory_fraction]\n    rms_residual: 0.01\n    uncertainty: "
      "{memory_fraction: 0.02}\n    measurements:\n      - {id: a, file: a.yaml, metric: iteration_time_s, "
      "published: 1.5, simulated: 1.515, residual: 0.01}\n");
  const HardwareProfile p = load_hardware("stack.yaml");
  ASSERT_TRUE(p.stack->fit.has_value());
  EXPECT_THAT(p.stack->fit->parameters, ElementsAre(StackParameter::kMemoryFraction));
  ASSERT_EQ(p.stack->fit->measurements.size(), 1u);
  EXPECT_EQ(p.stack->fit->measurements[0].id, "a");
  EXPECT_DOUBLE_EQ(p.stack->fit->uncertainty.at(StackParameter::kMemoryFraction), 0.02);
}

TEST_F(StackProfileTest, MistakesAreLocated) {
  write(
      "  framework: f\n  parameters: {gemm_fractoin: 0.9, memory_fraction: 3, host_dispatch: 5}\n"
      "  fit: {command: x, parameters: [gemm]}\n");
  const std::vector<std::string> errors = errors_of([] { load_hardware("stack.yaml"); });
  EXPECT_THAT(
      errors,
      ElementsAre(HasSubstr("stack.yaml:6:16: error: stack.parameters.gemm_fractoin: unknown key "
                            "\"gemm_fractoin\" (did you mean \"gemm_fraction\"?)"),
                  HasSubstr("stack.yaml:6:53: error: stack.parameters.memory_fraction: must be at most 1.1"),
                  HasSubstr("stack.yaml:6:71: error: stack.parameters.host_dispatch: expected a duration"),
                  HasSubstr("stack.yaml:7:34: error: stack.fit.parameters[0]: unknown value "
                            "\"gemm\"")));
}

TEST_F(StackProfileTest, AStackFileDoesNotChangeTheHardwareItExtends) {
  write("  framework: f\n", "gpu: {hbm: {capacity: 141GB}}\n");
  EXPECT_THAT(errors_of([] { load_hardware("stack.yaml"); }),
              ElementsAre(HasSubstr(
                  "stack.yaml:6:6: error: gpu: a stack profile sets only name, stack and sources")));
}

TEST_F(StackProfileTest, AStackExtendsAHardwareProfile) {
  dir_.write("alone.yaml", "schema_version: 1\nname: alone\nstack: {framework: f}\n");
  const std::vector<std::string> errors = errors_of([] { load_hardware("alone.yaml"); });
  EXPECT_THAT(errors, ::testing::Contains(HasSubstr("a stack profile extends the hardware profile")));
}

TEST_F(StackProfileTest, AScenarioNamesAStackWhereItNamesHardwareAndCanSetItsParameters) {
  write("  framework: f\n  parameters: {gemm_fraction: 0.85}\n");
  dir_.write("s.yaml",
             "schema_version: 1\nname: s\nmodel: {preset: gpt3-125m}\ntraining: {global_batch: 8}\n"
             "parallelism: {dp: 8}\ncluster:\n  topology: topo.yaml\n  hardware: stack.yaml\n  gpus: 8\n"
             "  hardware_set: {stack: {parameters: {memory_fraction: 0.5}}}\n");
  const Scenario s = load_scenario("s.yaml");
  ASSERT_TRUE(s.cluster.hardware.stack.has_value());
  EXPECT_DOUBLE_EQ(s.cluster.hardware.stack->parameters[StackParameter::kGemmFraction], 0.85);
  EXPECT_DOUBLE_EQ(s.cluster.hardware.stack->parameters[StackParameter::kMemoryFraction], 0.5);
  ASSERT_EQ(s.cluster.hardware.what_if.size(), 1u);
  EXPECT_EQ(s.cluster.hardware.what_if[0].key, "stack.parameters.memory_fraction");
}

TEST(StackParameters, TableNamesEveryParameterWithNeutralValuesInsideTheBounds) {
  for (const StackParameterInfo& info : stack_parameter_table()) {
    EXPECT_EQ(parse_stack_parameter(info.name), info.id);
    EXPECT_LE(info.lower, info.neutral) << info.name;
    EXPECT_LE(info.neutral, info.upper) << info.name;
    EXPECT_EQ(&info_of(info.id), &info);
  }
  EXPECT_TRUE(StackParameters().neutral());
  EXPECT_FALSE(parse_stack_parameter("gemm").has_value());
}

}  // namespace
}  // namespace trainsim::config
