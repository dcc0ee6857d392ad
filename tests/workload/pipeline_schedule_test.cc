// Pipeline schedules: GPipe, 1F1B and interleaved 1F1B as Megatron-LM orders them.
#include "sim/workload/pipeline_schedule.h"

#include <map>

#include <gtest/gtest.h>

namespace trainsim::workload {
namespace {

using config::Schedule;

int64_t leading_forwards(const std::vector<PipelineStep>& steps) {
  int64_t n = 0;
  while (n < static_cast<int64_t>(steps.size()) && steps[n].forward) ++n;
  return n;
}

// Every (micro-batch, chunk) runs forward once and backward once, forward first.
void expect_complete(const std::vector<PipelineStep>& steps, int64_t m, int64_t vpp) {
  std::map<std::pair<int64_t, int64_t>, int> state;
  for (const PipelineStep& s : steps) {
    int& st = state[{s.micro_batch, s.chunk}];
    if (s.forward) {
      EXPECT_EQ(st, 0) << "forward twice " << s.micro_batch << '/' << s.chunk;
      st = 1;
    } else {
      EXPECT_EQ(st, 1) << "backward before forward " << s.micro_batch << '/' << s.chunk;
      st = 2;
    }
  }
  EXPECT_EQ(static_cast<int64_t>(state.size()), m * vpp);
  for (const auto& [key, st] : state) EXPECT_EQ(st, 2);
}

TEST(PipelineSchedule, OneFOneBWarmsUpWithPipelineDepthMinusStage) {
  const int64_t pp = 4, m = 8;
  for (int64_t stage = 0; stage < pp; ++stage) {
    const auto steps = pipeline_schedule(Schedule::kOneFOneB, pp, stage, 1, m);
    expect_complete(steps, m, 1);
    // pp - stage - 1 warm-up forwards, then the first steady-state forward.
    EXPECT_EQ(leading_forwards(steps), pp - stage) << "stage " << stage;
    // Steady state alternates.
    for (size_t i = pp - stage; i + 1 < steps.size() - (pp - stage - 1); i += 2) {
      EXPECT_FALSE(steps[i].forward);
    }
  }
  // Fewer micro-batches than stages: all forwards first.
  EXPECT_EQ(leading_forwards(pipeline_schedule(Schedule::kOneFOneB, 8, 0, 1, 3)), 3);
}

TEST(PipelineSchedule, GpipeRunsAllForwardsThenAllBackwards) {
  const auto steps = pipeline_schedule(Schedule::kGpipe, 4, 2, 1, 6);
  expect_complete(steps, 6, 1);
  EXPECT_EQ(leading_forwards(steps), 6);
  EXPECT_EQ(steps[6].micro_batch, 0);
}

TEST(PipelineSchedule, InterleavedFollowsMegatronChunkOrder) {
  const int64_t pp = 2, vpp = 2, m = 4;
  const auto first = pipeline_schedule(Schedule::kInterleaved, pp, 0, vpp, m);
  expect_complete(first, m, vpp);
  // Warm-up on stage 0: (pp - 1) * 2 + (vpp - 1) * pp = 4 forwards: mb 0, 1 of chunk 0, then of chunk 1.
  ASSERT_EQ(leading_forwards(first), 5);
  const std::vector<PipelineStep> warmup(first.begin(), first.begin() + 5);
  EXPECT_EQ(warmup, (std::vector<PipelineStep>{
                        {true, 0, 0}, {true, 1, 0}, {true, 0, 1}, {true, 1, 1}, {true, 2, 0}}));
  // Backwards visit the chunks in reverse: the first backward is micro-batch 0 of the last chunk.
  EXPECT_EQ(first[5], (PipelineStep{false, 0, 1}));
  const auto last = pipeline_schedule(Schedule::kInterleaved, pp, 1, vpp, m);
  expect_complete(last, m, vpp);
  EXPECT_EQ(leading_forwards(last), (vpp - 1) * pp + 1);
  // m == pp: every forward runs before any backward.
  EXPECT_EQ(leading_forwards(pipeline_schedule(Schedule::kInterleaved, 2, 1, 2, 2)), 4);
}

}  // namespace
}  // namespace trainsim::workload
