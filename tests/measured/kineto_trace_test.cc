#include "sim/measured/kineto_trace.h"

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "sim/config/diagnostics.h"

namespace trainsim::measured {
namespace {

using ::testing::HasSubstr;

// A file of this test's own, holding `content`.
std::filesystem::path write_file(const std::string& content) {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  const std::filesystem::path path = std::filesystem::temp_directory_path() /
                                     fmt::format("trainsim-kineto-{}-{}.json", info->name(), ::getpid());
  std::ofstream(path, std::ios::binary) << content;
  return path;
}

std::string step(int n, double ts, double dur) {
  return fmt::format(
      R"({{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#{}", "ts": {}, "dur": {}}})", n, ts,
      dur);
}
std::string launch(int correlation, double ts) {
  return fmt::format(R"({{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": {}, "dur": 3, )"
                     R"("args": {{"correlation": {}}}}})",
                     ts, correlation);
}
std::string kernel(const std::string& name, int correlation, double ts, double dur, int device = 0) {
  return fmt::format(R"({{"ph": "X", "cat": "kernel", "name": "{}", "pid": {}, "ts": {}, "dur": {}, )"
                     R"("args": {{"device": {}, "stream": 7, "correlation": {}}}}})",
                     name, device, ts, dur, device, correlation);
}
std::string trace(const std::vector<std::string>& events, const std::string& extra = "") {
  std::string body;
  for (const std::string& e : events) body += (body.empty() ? "" : ",\n") + e;
  return fmt::format("{{{}\"traceEvents\": [\n{}\n]}}", extra, body);
}

// Two steps of 1 ms on the host. Step 1's GEMM runs late, after step 2 began on the host: it is step
// 1's all the same (its launch is).
std::string two_steps() {
  return trace(
      {step(1, 0, 1000), step(2, 1000, 1000), launch(1, 10), launch(2, 20), launch(3, 1010),
       kernel("nvjet_tst_gemm", 1, 100, 600), kernel("ncclDevKernel_AllReduce_Sum_bf16", 2, 500, 900),
       kernel("flash_fwd_kernel", 3, 1600, 300)},
      R"("distributedInfo": {"rank": 3, "world_size": 8}, )");
}

TEST(ReadKinetoTrace, AttributesActivitiesToTheStepThatLaunchedThem) {
  const MeasuredTrace t = read_kineto_trace(write_file(two_steps()));
  EXPECT_EQ(t.rank, 3);
  EXPECT_EQ(t.world_size, 8);
  EXPECT_EQ(t.device, 0);
  ASSERT_EQ(t.steps.size(), 2u);
  EXPECT_EQ(t.step_names, (std::vector<std::string>{"ProfilerStep#1", "ProfilerStep#2"}));
  // Step 1's window: from its first kernel (100 us) to step 2's first (1600 us).
  const StepProfile& s1 = t.steps[0];
  EXPECT_NEAR(s1.step_s, 1.5e-3, 1e-12);
  EXPECT_NEAR(s1.of(ActivityClass::kGemm).time_s, 0.6e-3, 1e-12);
  EXPECT_NEAR(s1.of(ActivityClass::kAllReduce).time_s, 0.9e-3, 1e-12);
  EXPECT_NEAR(s1.compute_s, 0.6e-3, 1e-12);
  EXPECT_NEAR(s1.exposed_comm_s, 0.7e-3, 1e-12);  // 700 .. 1400 us
  EXPECT_NEAR(s1.idle_s, 0.2e-3, 1e-12);
  // The last step: its host span (1 ms) outlasts its kernel.
  const StepProfile& s2 = t.steps[1];
  EXPECT_NEAR(s2.step_s, 1e-3, 1e-12);
  EXPECT_NEAR(s2.of(ActivityClass::kAttention).time_s, 0.3e-3, 1e-12);
  EXPECT_EQ(t.unattributed, 0);
  // Per kernel name, per kept step, longest first.
  ASSERT_EQ(t.kernels.size(), 3u);
  EXPECT_EQ(t.kernels[0].name, "ncclDevKernel_AllReduce_Sum_bf16");
  EXPECT_EQ(t.kernels[0].cls, ActivityClass::kAllReduce);
  EXPECT_NEAR(t.kernels[0].time_s, 0.45e-3, 1e-12);
  EXPECT_DOUBLE_EQ(t.kernels[0].count, 0.5);
  EXPECT_EQ(t.kernels[1].name, "nvjet_tst_gemm");
  EXPECT_EQ(t.kernels[2].name, "flash_fwd_kernel");
}

TEST(ReadKinetoTrace, SkipsWarmUpSteps) {
  const MeasuredTrace t = read_kineto_trace(write_file(two_steps()), {std::nullopt, 1});
  EXPECT_EQ(t.skipped_steps, 1);
  ASSERT_EQ(t.steps.size(), 1u);
  EXPECT_EQ(t.step_names.front(), "ProfilerStep#2");
}

TEST(ReadKinetoTrace, ReadsTheBusiestDeviceUnlessTold) {
  const std::string text = trace({step(1, 0, 1000), launch(1, 10), launch(2, 20),
                                  kernel("gemm_a", 1, 100, 50, 0), kernel("gemm_b", 2, 100, 500, 1)});
  const std::filesystem::path path = write_file(text);
  const MeasuredTrace busiest = read_kineto_trace(path);
  EXPECT_EQ(busiest.device, 1);
  EXPECT_EQ(busiest.other_devices, std::vector<int64_t>{0});
  EXPECT_NEAR(busiest.steps[0].of(ActivityClass::kGemm).time_s, 500e-6, 1e-12);
  const MeasuredTrace zero = read_kineto_trace(path, {0, 0});
  EXPECT_NEAR(zero.steps[0].of(ActivityClass::kGemm).time_s, 50e-6, 1e-12);
  try {
    read_kineto_trace(path, {5, 0});
    FAIL() << "device 5 was read";
  } catch (const config::ConfigError& e) {
    EXPECT_THAT(e.what(), HasSubstr("no activity of device 5; its devices are 0, 1"));
  }
}

TEST(ReadKinetoTrace, CountsWhatNoStepLaunched) {
  const MeasuredTrace t = read_kineto_trace(
      write_file(trace({launch(9, -500), kernel("early_kernel", 9, -400, 10), step(1, 0, 1000), launch(1, 10),
                        kernel("late_gemm", 1, 50, 100)})));
  EXPECT_EQ(t.unattributed, 1);
  EXPECT_DOUBLE_EQ(t.steps[0].of(ActivityClass::kMemory).count, 0);
}

TEST(ReadKinetoTrace, TakesAnArrayOfEventsAndCopiesWithoutCorrelation) {
  const std::string copy =
      R"json({"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy DtoH (Device -> Pinned)", "ts": 200, "dur": 100, "args": {"device": 0}})json";
  const MeasuredTrace t = read_kineto_trace(write_file(fmt::format("[{}, {}]", step(1, 0, 1000), copy)));
  EXPECT_NEAR(t.steps[0].of(ActivityClass::kHostCopy).time_s, 100e-6, 1e-12);
  EXPECT_NEAR(t.steps[0].exposed_copy_s, 100e-6, 1e-12);
}

// The message of the ConfigError that reading `content` throws.
std::string error_of(const std::string& content, const TraceOptions& options = {}) {
  try {
    read_kineto_trace(write_file(content), options);
  } catch (const config::ConfigError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(ReadKinetoTrace, RefusesWhatItCannotCompareWithLocatedErrors) {
  EXPECT_THAT(error_of("{\"traceEvents\": [\n  {\"ph\": \"X\",, }\n]}"),
              testing::MatchesRegex(".*trainsim-kineto-.*\\.json:2:1[0-9]: error: not valid JSON: .*"));
  EXPECT_THAT(error_of(std::string("\x1f\x8b\x08", 3)), HasSubstr("gzip-compressed"));
  EXPECT_THAT(error_of(R"({"events": []})"), HasSubstr("no \"traceEvents\""));
  EXPECT_THAT(error_of("42"), HasSubstr("not a Chrome trace"));
  EXPECT_THAT(error_of(trace({step(1, 0, 10)})), HasSubstr("no GPU activity"));
  EXPECT_THAT(error_of(trace({kernel("gemm", 1, 0, 10)})),
              HasSubstr("call prof.step() once per training iteration"));
  EXPECT_THAT(error_of(two_steps(), {std::nullopt, 2}),
              HasSubstr("holds 2 step(s), and 2 are to be skipped"));
  EXPECT_THAT(error_of(trace({step(1, 0, 10), step(2, 10, 10), launch(1, 1), kernel("gemm", 1, 2, 3)})),
              HasSubstr("step ProfilerStep#2 launched nothing on device 0"));
  EXPECT_THAT(error_of(trace({step(1, 0, 10), kernel("gemm", 1, 2, 1e13)})),
              HasSubstr("event \"gemm\": \"ts\" 2 or \"dur\" 10000000000000 (microseconds) is out of range"));
  EXPECT_THAT(error_of(R"({"traceEvents": [{"ph": "X", "ts": 1e999}]})"), HasSubstr("not valid JSON: "));
}

std::string comm(double ts, const char* name, int64_t in, int64_t out, const char* dtype, int group = 8) {
  return fmt::format(
      R"({{"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "ts": {}, "dur": 2, "args": )"
      R"({{"Collective name": "{}", "In msg nelems": {}, "Out msg nelems": {}, "dtype": "{}", )"
      R"("Group size": {}}}}})",
      ts, name, in, out, dtype, group);
}

TEST(ReadKinetoTrace, CountsCommunicationPerStepAsTheSimulatorNamesIt) {
  const MeasuredTrace t = read_kineto_trace(
      write_file(trace(
          {comm(-5, "allreduce", 1, 1, "Float"),  // before every step: not counted
           step(1, 0, 1000), step(2, 1000, 1000), step(3, 2000, 1000), launch(1, 10), kernel("a", 1, 20, 5),
           launch(2, 1010), kernel("b", 2, 1020, 5), launch(3, 2010), kernel("c", 3, 2020, 5),
           comm(20, "allreduce", 4096, 4096, "BFloat16"),  // step 1: skipped
           comm(1020, "allreduce", 1000, 1000, "BFloat16"), comm(2020, "allreduce", 3000, 3000, "BFloat16"),
           comm(1030, "_reduce_scatter_base", 800, 100, "Float"),
           comm(1040, "all_gather_into_tensor_coalesced", 50, 400, "BFloat16"),
           comm(1050, "all_to_allv", 64, 64, "Float8_e4m3fn", 4), comm(1060, "send", 10, 10, "Long", 0),
           comm(1070, "allreduce", 10, 10, "ComplexFloat"), comm(1080, "gather", 10, 10, "Float")})),
      {std::nullopt, 1});
  ASSERT_EQ(t.comms.size(), 5u);  // in kind order
  EXPECT_EQ(t.comms[0].kind, "all_gather");
  EXPECT_DOUBLE_EQ(t.comms[0].bytes, 400.0 * 2 / 2);  // the gathered output, per kept step
  EXPECT_EQ(t.comms[1].kind, "all_reduce");
  EXPECT_EQ(t.comms[1].group_size, 8);
  EXPECT_DOUBLE_EQ(t.comms[1].calls, 1);
  EXPECT_DOUBLE_EQ(t.comms[1].bytes, (1000.0 + 3000.0) * 2 / 2);
  EXPECT_EQ(t.comms[2].kind, "all_to_all");
  EXPECT_EQ(t.comms[2].group_size, 4);
  EXPECT_DOUBLE_EQ(t.comms[2].bytes, 64.0 / 2);
  EXPECT_EQ(t.comms[3].kind, "reduce_scatter");
  EXPECT_DOUBLE_EQ(t.comms[3].bytes, 800.0 * 4 / 2);  // the full input
  EXPECT_EQ(t.comms[4].kind, "send");
  EXPECT_EQ(t.comms[4].group_size, 2);
  EXPECT_DOUBLE_EQ(t.comms[4].calls, 0.5);
  EXPECT_EQ(t.comms_unknown, 2);  // ComplexFloat, gather
}

TEST(ReadKinetoTrace, IgnoresEventsOfOtherShapes) {
  const MeasuredTrace t =
      read_kineto_trace(write_file(trace({step(1, 0, 1000), launch(1, 10), kernel("gemm", 1, 100, 50),
                                          R"({"ph": "X", "cat": 7, "name": "odd", "ts": 1, "dur": 1})",
                                          R"({"ph": "i", "name": "instant", "ts": 5})",
                                          R"({"ph": "X", "cat": "kernel", "name": "no duration", "ts": 5})",
                                          R"({"ph": "X", "name": 3, "ts": 5, "dur": 1})"})));
  EXPECT_DOUBLE_EQ(t.steps[0].of(ActivityClass::kGemm).count, 1);
  EXPECT_EQ(t.kernels.size(), 1u);
}

TEST(ReadKinetoTrace, RefusesAMissingFile) {
  try {
    read_kineto_trace("/nonexistent/trace.json");
    FAIL();
  } catch (const config::ConfigError& e) {
    EXPECT_THAT(e.what(), HasSubstr("trace.json: error: no such file"));
  }
}

}  // namespace
}  // namespace trainsim::measured
