// Pipeline schedules: GPipe, 1F1B and interleaved 1F1B as Megatron-LM orders them; zero bubble as
// Qi et al. 2024 (ZB-H1) and PyTorch's ScheduleInterleavedZeroBubble order it; DualPipeV as
// DeepSeek's dualpipev.py orders it.
#include "sim/workload/pipeline_schedule.h"

#include <algorithm>
#include <map>
#include <string>

#include <gtest/gtest.h>

namespace trainsim::workload {
namespace {

using config::Schedule;
constexpr Pass kF = Pass::kForward, kB = Pass::kInputGrad, kW = Pass::kWeightGrad;

int64_t leading_forwards(const std::vector<PipelineStep>& steps) {
  int64_t n = 0;
  while (n < static_cast<int64_t>(steps.size()) && steps[n].pass == kF) ++n;
  return n;
}

// Every (micro-batch, chunk) runs forward once, then its whole backward once or its input-gradient
// and then its weight-gradient pass once each.
void expect_complete(const std::vector<PipelineStep>& steps, int64_t m, int64_t vpp) {
  std::map<std::pair<int64_t, int64_t>, Pass> last;
  for (const PipelineStep& s : steps) {
    const auto [it, first] = last.try_emplace({s.micro_batch, s.chunk}, s.pass);
    const Pass before = it->second;
    it->second = s.pass;
    if (first) {
      EXPECT_EQ(s.pass, kF) << "backward before forward " << s.micro_batch << '/' << s.chunk;
    } else if (s.pass == Pass::kBackward || s.pass == kB) {
      EXPECT_EQ(before, kF) << "backward twice or before forward " << s.micro_batch << '/' << s.chunk;
    } else {
      EXPECT_EQ(s.pass == kW ? kB : kF, before) << "out of order " << s.micro_batch << '/' << s.chunk;
    }
  }
  EXPECT_EQ(static_cast<int64_t>(last.size()), m * vpp);
  for (const auto& [key, pass] : last) EXPECT_TRUE(pass == Pass::kBackward || pass == kW);
}

// The steps as "F0 B0 W0 ...": pass and micro-batch, and ".1" for the second model chunk.
std::string passes(const std::vector<PipelineStep>& steps) {
  std::string out;
  for (const PipelineStep& s : steps) {
    if (!out.empty()) out += ' ';
    out += s.pass == kF ? 'F' : s.pass == kB ? 'B' : s.pass == kW ? 'W' : 'b';
    out += std::to_string(s.micro_batch);
    if (s.chunk > 0) out += '.' + std::to_string(s.chunk);
  }
  return out;
}

// The most (micro-batch, chunk) pairs between their forward and the end of their backward.
int64_t most_in_flight(const std::vector<PipelineStep>& steps) {
  int64_t now = 0, most = 0;
  for (const PipelineStep& s : steps) {
    if (s.pass == kF) most = std::max(most, ++now);
    if (s.pass == Pass::kBackward || s.pass == kW) --now;
  }
  return most;
}

TEST(PipelineSchedule, OneFOneBWarmsUpWithPipelineDepthMinusStage) {
  const int64_t pp = 4, m = 8;
  for (int64_t stage = 0; stage < pp; ++stage) {
    const auto steps = pipeline_schedule(Schedule::kOneFOneB, pp, stage, 1, m, false);
    expect_complete(steps, m, 1);
    // pp - stage - 1 warm-up forwards, then the first steady-state forward.
    EXPECT_EQ(leading_forwards(steps), pp - stage) << "stage " << stage;
    // Steady state alternates.
    for (size_t i = pp - stage; i + 1 < steps.size() - (pp - stage - 1); i += 2) {
      EXPECT_EQ(steps[i].pass, Pass::kBackward);
    }
  }
  // Fewer micro-batches than stages: all forwards first.
  EXPECT_EQ(leading_forwards(pipeline_schedule(Schedule::kOneFOneB, 8, 0, 1, 3, false)), 3);
}

TEST(PipelineSchedule, GpipeRunsAllForwardsThenAllBackwards) {
  const auto steps = pipeline_schedule(Schedule::kGpipe, 4, 2, 1, 6, false);
  expect_complete(steps, 6, 1);
  EXPECT_EQ(leading_forwards(steps), 6);
  EXPECT_EQ(steps[6].micro_batch, 0);
}

TEST(PipelineSchedule, InterleavedFollowsMegatronChunkOrder) {
  const int64_t pp = 2, vpp = 2, m = 4;
  const auto first = pipeline_schedule(Schedule::kInterleaved, pp, 0, vpp, m, false);
  expect_complete(first, m, vpp);
  // Warm-up on stage 0: (pp - 1) * 2 + (vpp - 1) * pp = 4 forwards: mb 0, 1 of chunk 0, then of chunk 1.
  ASSERT_EQ(leading_forwards(first), 5);
  const std::vector<PipelineStep> warmup(first.begin(), first.begin() + 5);
  EXPECT_EQ(warmup, (std::vector<PipelineStep>{{kF, 0, 0}, {kF, 1, 0}, {kF, 0, 1}, {kF, 1, 1}, {kF, 2, 0}}));
  // Backwards visit the chunks in reverse: the first backward is micro-batch 0 of the last chunk.
  EXPECT_EQ(first[5], (PipelineStep{Pass::kBackward, 0, 1}));
  const auto last = pipeline_schedule(Schedule::kInterleaved, pp, 1, vpp, m, false);
  expect_complete(last, m, vpp);
  EXPECT_EQ(leading_forwards(last), (vpp - 1) * pp + 1);
  // m == pp: every forward runs before any backward.
  EXPECT_EQ(leading_forwards(pipeline_schedule(Schedule::kInterleaved, 2, 1, 2, 2, false)), 4);
}

// Megatron-Core's combined 1F1B (overlap_moe_expert_parallel_comm): one more warm-up forward, then
// every steady-state backward overlapped with the forward before it, which is of another micro-batch.
TEST(PipelineSchedule, PairsRunEachSteadyStateBackwardWithTheForwardBefore) {
  // One stage: combined_1f1b_schedule_for_no_pipelining's phases (F0; F1 with b0; ...; b3 alone).
  const auto one = pipeline_schedule(Schedule::kOneFOneB, 1, 0, 1, 4, true);
  EXPECT_EQ(passes(one), "F0 F1 b0 F2 b1 F3 b2 b3");
  EXPECT_EQ(std::count_if(one.begin(), one.end(), [](const PipelineStep& s) { return s.overlapped; }), 3);
  EXPECT_FALSE(one.back().overlapped);
  const int64_t pp = 4, vpp = 2;
  for (const int64_t m : {4, 8, 12}) {
    for (int64_t stage = 0; stage < pp; ++stage) {
      const auto plain = pipeline_schedule(Schedule::kInterleaved, pp, stage, vpp, m, false);
      const auto paired = pipeline_schedule(Schedule::kInterleaved, pp, stage, vpp, m, true);
      expect_complete(paired, m, vpp);
      const int64_t total = m * vpp;
      // Megatron's interleaved warm-up, one forward more; the first steady-state forward follows it.
      const int64_t warmup = m == pp ? total : std::min(2 * (pp - stage - 1) + (vpp - 1) * pp + 1, total);
      EXPECT_EQ(leading_forwards(paired), std::min(warmup + 1, total))
          << "stage " << stage << ", " << m << " micro-batches";
      int64_t pairs = 0;
      for (size_t i = 0; i < paired.size(); ++i) {
        if (!paired[i].overlapped) continue;
        ++pairs;
        ASSERT_GT(i, 0U);
        EXPECT_EQ(paired[i - 1].pass, kF);
        EXPECT_NE(paired[i - 1].micro_batch, paired[i].micro_batch);
      }
      EXPECT_EQ(pairs, total - warmup) << "stage " << stage << ", " << m << " micro-batches";
      // The extra warm-up forward keeps one more (micro-batch, chunk) in flight.
      if (m > pp) {
        EXPECT_EQ(most_in_flight(paired), most_in_flight(plain) + 1);
      }
    }
  }
}

TEST(PipelineSchedule, ZeroBubbleHoldsBackTheFirstStageWeightPasses) {
  // pp 2, m 3: stage 0 warms up with one forward and runs each W right after its B; stage 1 holds
  // back one W, which runs last.
  EXPECT_EQ(passes(pipeline_schedule(Schedule::kZeroBubble, 2, 0, 1, 3, false)),
            "F0 F1 B0 W0 F2 B1 W1 B2 W2");
  EXPECT_EQ(passes(pipeline_schedule(Schedule::kZeroBubble, 2, 1, 1, 3, false)),
            "F0 B0 F1 B1 W0 F2 B2 W1 W2");
  const int64_t pp = 4, m = 8;
  for (int64_t stage = 0; stage < pp; ++stage) {
    const auto steps = pipeline_schedule(Schedule::kZeroBubble, pp, stage, 1, m, false);
    expect_complete(steps, m, 1);
    // The 1F1B warm-up.
    EXPECT_EQ(leading_forwards(steps), pp - stage) << "stage " << stage;
    // stage + 1 B passes before the first W.
    const auto first_w =
        std::find_if(steps.begin(), steps.end(), [](const PipelineStep& s) { return s.pass == kW; });
    EXPECT_EQ(std::count_if(steps.begin(), first_w, [](const PipelineStep& s) { return s.pass == kB; }),
              stage + 1);
    // Every stage holds pp micro-batches, 1F1B's first-stage peak (Qi et al.: ZB-H1 keeps 1F1B's peak).
    EXPECT_EQ(most_in_flight(steps), pp) << "stage " << stage;
    EXPECT_EQ(most_in_flight(pipeline_schedule(Schedule::kOneFOneB, pp, stage, 1, m, false)), pp - stage);
  }
  // Fewer micro-batches than stages: every forward first, as 1F1B.
  EXPECT_EQ(leading_forwards(pipeline_schedule(Schedule::kZeroBubble, 8, 0, 1, 3, false)), 3);
  expect_complete(pipeline_schedule(Schedule::kZeroBubble, 8, 6, 1, 3, false), 3, 1);
}

TEST(PipelineSchedule, InterleavedZeroBubbleWarmsUpHalfAsLongAsInterleaved1F1B) {
  const int64_t pp = 4, vpp = 2, m = 8;
  for (int64_t stage = 0; stage < pp; ++stage) {
    const auto steps = pipeline_schedule(Schedule::kZeroBubble, pp, stage, vpp, m, false);
    expect_complete(steps, m, vpp);
    // (vpp - 1)*pp + (pp - stage - 1) warm-up forwards, then the first steady-state one.
    EXPECT_EQ(leading_forwards(steps), (vpp - 1) * pp + pp - stage) << "stage " << stage;
    // Forwards in Megatron's chunk order, backwards from the last chunk.
    EXPECT_EQ(steps[static_cast<size_t>(pp)], (PipelineStep{kF, 0, 1}));
    EXPECT_EQ(steps[static_cast<size_t>(leading_forwards(steps))], (PipelineStep{kB, 0, 1}));
    // Every stage holds pp*vpp (micro-batch, chunk) pairs: pp micro-batches' worth of its layers.
    EXPECT_EQ(most_in_flight(steps), pp * vpp) << "stage " << stage;
  }
}

TEST(PipelineSchedule, ZbVRunsTwoChunksDownAndUpAtOneFOneBMemory) {
  const int64_t pp = 4;
  for (const int64_t m : {8, 12, 3}) {  // 3 < 2pp - 1: the pattern's missing micro-batches dropped
    for (int64_t stage = 0; stage < pp; ++stage) {
      const auto steps = pipeline_schedule(Schedule::kZbV, pp, stage, 2, m, false);
      expect_complete(steps, m, 2);
      // Every stage holds at most 2pp chunk-micro-batches: pp micro-batches' worth of its layers.
      EXPECT_LE(most_in_flight(steps), 2 * pp) << "stage " << stage << ", " << m << " micro-batches";
    }
  }
  // Stage 0 warms up with 2pp - 1 forwards of chunk 0, then chunk 1's first; the last stage turns
  // the V at once: its chunk-1 and chunk-0 forwards alternate up to chunk 1's first B and W.
  const auto first = pipeline_schedule(Schedule::kZbV, pp, 0, 2, 8, false);
  EXPECT_EQ(leading_forwards(first), 2 * pp);
  EXPECT_EQ(first[2 * pp - 1], (PipelineStep{kF, 0, 1}));
  const auto last = pipeline_schedule(Schedule::kZbV, pp, pp - 1, 2, 8, false);
  EXPECT_EQ(passes({last.begin(), last.begin() + 10}), "F0 F0.1 F1 F1.1 F2 F2.1 F3 F3.1 B0.1 W0.1");
}

TEST(PipelineSchedule, DualPipeVOverlapsForwardAndBackwardPairsInAV) {
  const int64_t pp = 4;
  for (const int64_t m : {8, 12, 5}) {  // 5 < 2pp: the pattern's missing micro-batches dropped
    for (int64_t stage = 0; stage < pp; ++stage) {
      const auto steps = pipeline_schedule(Schedule::kDualPipeV, pp, stage, 2, m, false);
      expect_complete(steps, m, 2);
      int64_t pairs = 0;
      for (size_t i = 0; i < steps.size(); ++i) {
        if (!steps[i].overlapped) continue;
        ++pairs;
        // A whole backward right after a forward of the other chunk.
        ASSERT_GT(i, 0U);
        EXPECT_EQ(steps[i].pass, Pass::kBackward);
        EXPECT_EQ(steps[i - 1].pass, kF);
        EXPECT_NE(steps[i - 1].chunk, steps[i].chunk);
      }
      if (m < 2 * pp) continue;
      // The main step's two pairs per round and step 5's one, less the last stage's first.
      EXPECT_EQ(pairs, 2 * (m - 2 * pp + stage + 1) + (pp - stage - 1) - (stage == pp - 1 ? 1 : 0))
          << "stage " << stage << ", " << m << " micro-batches";
      // One (micro-batch, chunk) more in flight than ZB-V's 2pp.
      EXPECT_EQ(most_in_flight(steps), 2 * pp + 1) << "stage " << stage << ", " << m << " micro-batches";
    }
  }
  // Stage 0 warms up with 2(pp - 1) + 1 forwards of chunk 0, then chunk 1's first and its zero-bubble
  // rounds (B, W, F); the last stage turns the V at once and runs its first pair one pass after the
  // other ('b': a whole backward).
  const auto first = pipeline_schedule(Schedule::kDualPipeV, pp, 0, 2, 8, false);
  EXPECT_EQ(passes({first.begin(), first.begin() + 11}), "F0 F1 F2 F3 F4 F5 F6 F0.1 B0.1 W0.1 F1.1");
  const auto last = pipeline_schedule(Schedule::kDualPipeV, pp, pp - 1, 2, 8, false);
  EXPECT_EQ(passes({last.begin(), last.begin() + 14}),
            "F0 F0.1 F1 F1.1 F2 F2.1 F3 F3.1 F4 b0.1 F4.1 b0 F5 b1.1");
  EXPECT_FALSE(last[9].overlapped);
  EXPECT_TRUE(last[11].overlapped);
  EXPECT_TRUE(last[13].overlapped);
}

}  // namespace
}  // namespace trainsim::workload
