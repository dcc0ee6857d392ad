// Fitting a stack profile: the fixture's cases were made with gemm_fraction 0.8 and memory_fraction
// 0.7, and a fit on them must find those again; validation cases are never fitted on; fits that mean
// nothing are refused; the written profile loads and names everything it was fitted on.
#include "sim/validate/stack_fit.h"

#include <algorithm>
#include <fstream>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "sim/common/isolated.h"
#include "sim/config/loader.h"
#include "sim/engine/scenario_run.h"
#include "sim/report/compare.h"
#include "sim/validate/runner.h"
#include "tests/validate/fixtures_dir.h"

namespace trainsim::validate {
namespace {

using config::StackParameter;
using ::testing::HasSubstr;

using testing::kFixtures;

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

// The fixture's published values are the simulator's own at gemm_fraction 0.8 and memory_fraction
// 0.7 (to the 6 digits written); a change of the cost model must remake them.
TEST(StackFit, TheFixtureCasesWereMadeWithTheKnownStack) {
  const ValidationSet set = load_validation_set(kFixtures / "stack-fit");
  config::StackParameters known;
  known[StackParameter::kGemmFraction] = 0.8;
  known[StackParameter::kMemoryFraction] = 0.7;
  RunnerOptions options;
  options.jobs = 2;
  options.variant.stack = known;
  const std::vector<CaseResult> results = run_cases(set.cases, options);
  for (size_t i = 0; i < set.cases.size(); ++i) {
    if (set.cases[i].id == "fixture-fit-16gpu") continue;
    ASSERT_TRUE(results[i].ok) << results[i].error;
    const double simulated = results[i].measurement.simulated;
    EXPECT_NEAR(simulated / set.cases[i].published, 1, 1e-5)
        << set.cases[i].display_file << ": set `published: " << fmt::format("{:.6g}", simulated) << "`";
  }
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
  ASSERT_EQ(result.targets.size(), 4u);
  ASSERT_EQ(result.left_out.size(), 1u);
  EXPECT_THAT(result.left_out[0], HasSubstr("fixture-fit-16gpu: a validation case (16 GPUs on nodes of 8)"));
  for (const double r0 : result.residuals_before) EXPECT_LT(r0, -0.15);  // the hardware alone is too fast

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
              HasSubstr("collective_fraction_nvlink does not move any of the 2 measurements"));
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
              HasSubstr("1 calibration measurement on this stack profile cannot determine 2 parameters"));
}

TEST(StackFit, RefusesAHardwareProfile) {
  StackFitRequest r = request({kFixtures / "stack-fit"});
  r.stack_file = std::filesystem::path(TRAINSIM_SOURCE_DIR) / "calibrate/profiles/a100-sxm4-80gb.yaml";
  EXPECT_THAT(refusal(r), HasSubstr("is a hardware profile, not a stack profile"));
}

}  // namespace
}  // namespace trainsim::validate

namespace trainsim::validate {
namespace {

// A PyTorch profiler trace of one step as `activities` ran it (times in seconds), each kernel named
// so that the trace reader classifies it as its class and launched inside the ProfilerStep span.
std::string kineto_trace_of(const nlohmann::json& activities) {
  nlohmann::json events = nlohmann::json::array();
  double first = 1e300, last = 0;
  for (const nlohmann::json& a : activities) {
    first = std::min(first, a[1].get<double>());
    last = std::max(last, a[2].get<double>());
  }
  const auto us = [&](double s) { return (s - first) * 1e6 + 100; };
  events.push_back({{"ph", "X"},
                    {"cat", "user_annotation"},
                    {"name", "ProfilerStep#1"},
                    {"pid", 1},
                    {"tid", 1},
                    {"ts", us(first) - 50},
                    {"dur", us(last) - us(first) + 50},
                    {"args", nlohmann::json::object()}});
  int64_t correlation = 0;
  for (const nlohmann::json& a : activities) {
    const std::string cls = a[0].get<std::string>();
    const std::string name = cls == "gemm"        ? "sm80_xmma_gemm_bf16bf16_bf16f32"
                             : cls == "attention" ? "flash_fwd_kernel"
                             : cls == "optimizer" ? "multi_tensor_apply_kernel"
                                                  : "vectorized_elementwise_kernel";
    ++correlation;
    events.push_back({{"ph", "X"},
                      {"cat", "cuda_runtime"},
                      {"name", "cudaLaunchKernel"},
                      {"pid", 1},
                      {"tid", 1},
                      {"ts", us(first) - 40},
                      {"dur", 1},
                      {"args", {{"correlation", correlation}}}});
    events.push_back({{"ph", "X"},
                      {"cat", "kernel"},
                      {"name", name},
                      {"pid", 0},
                      {"tid", 7},
                      {"ts", us(a[1].get<double>())},
                      {"dur", us(a[2].get<double>()) - us(a[1].get<double>())},
                      {"args", {{"device", 0}, {"stream", 7}, {"correlation", correlation}}}});
  }
  return nlohmann::json{{"schemaVersion", 1}, {"traceEvents", events}}.dump();
}

// The user's own profiled run as the fit's input: a trace made by simulating the fixture scenario
// with gemm_fraction 0.8 and memory_fraction 0.7, which a fit on the trace alone must find again.
TEST(StackFit, AProfiledRunOnOneNodeIsFittedOnItsStepAndKernelClasses) {
  const std::filesystem::path scenario = kFixtures / "stack-fit/base/gpt-125m.yaml";
  nlohmann::json activities;
  run_isolated(
      1, {1, 120},
      [&](size_t) {
        config::Scenario s = config::load_scenario(scenario);
        s.cluster.hardware.stack->parameters[StackParameter::kGemmFraction] = 0.8;
        s.cluster.hardware.stack->parameters[StackParameter::kMemoryFraction] = 0.7;
        engine::RunOptions options;
        options.engine.iterations = 2;
        const std::unique_ptr<engine::ScenarioRun> run = engine::run_scenario(s, options);
        const engine::RankRun& rank = run->result.ranks.front();
        WarningLog warnings;
        const cost::ComputeModel compute(s.cluster.hardware, &warnings);
        nlohmann::json out = nlohmann::json::array();
        const double start = run->result.total_time_s - run->result.iteration_time_s;
        for (const measured::Activity& a : report::simulated_activities(run->graphs.front(), rank, compute)) {
          if (a.begin_s >= start)
            out.push_back({std::string(measured::to_string(a.cls)), a.begin_s, a.end_s});
        }
        return out;
      },
      [&](size_t, IsolatedResult r) {
        ASSERT_TRUE(r.ok) << r.error;
        activities = std::move(r.value);
      });
  ASSERT_FALSE(activities.empty());
  const std::filesystem::path trace =
      std::filesystem::temp_directory_path() / "trainsim-stack-fit-trace.json";
  std::ofstream(trace) << kineto_trace_of(activities);

  StackFitRequest r = request({});
  r.inputs.clear();
  r.traces = {{scenario, trace}};
  const StackFitResult result = fit_stack(r);
  const config::StackProfile& stack = *result.profile.stack;
  EXPECT_NEAR(stack.parameters[StackParameter::kGemmFraction], 0.8, 0.01);
  EXPECT_NEAR(stack.parameters[StackParameter::kMemoryFraction], 0.7, 0.01);
  ASSERT_GE(result.targets.size(), 3u);  // the step, GEMMs, memory-bound kernels
  EXPECT_EQ(result.targets[0].metric, "step_time_s");
  EXPECT_EQ(result.targets[1].metric, "gemm_time_s");
  ASSERT_EQ(stack.fit->traces.size(), 1u);
  std::filesystem::remove(trace);
}

TEST(StackFit, RefusesAProfiledRunOnSeveralNodes) {
  StackFitRequest r = request({});
  r.traces = {{kFixtures / "stack-fit/base/gpt-125m-16gpu.yaml",
               kFixtures / "../../measured/fixtures/kineto-gpt3-125m.json"}};
  EXPECT_THAT(refusal(r), HasSubstr("spans 16 GPUs on nodes of 8: a stack is fitted on one node"));
}

}  // namespace
}  // namespace trainsim::validate
