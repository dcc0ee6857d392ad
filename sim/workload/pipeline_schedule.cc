#include "sim/workload/pipeline_schedule.h"

#include <algorithm>
#include <array>
#include <deque>

#include "sim/workload/errors.h"

namespace trainsim::workload {
namespace {

std::vector<PipelineStep> gpipe(int64_t m) {
  std::vector<PipelineStep> steps;
  steps.reserve(2 * m);
  for (int64_t i = 0; i < m; ++i) steps.push_back({Pass::kForward, i, 0});
  for (int64_t i = 0; i < m; ++i) steps.push_back({Pass::kBackward, i, 0});
  return steps;
}

// `paired`: one more warm-up forward, and every steady-state backward overlapped with the forward
// before it (Megatron-Core's combined 1F1B).
std::vector<PipelineStep> one_f_one_b(int64_t pp, int64_t stage, int64_t m, bool paired) {
  const int64_t warmup = std::min(pp - stage - 1 + (paired ? 1 : 0), m);
  const int64_t remaining = m - warmup;
  std::vector<PipelineStep> steps;
  steps.reserve(2 * m);
  for (int64_t i = 0; i < warmup; ++i) steps.push_back({Pass::kForward, i, 0});
  for (int64_t i = 0; i < remaining; ++i) {
    steps.push_back({Pass::kForward, warmup + i, 0});
    steps.push_back({Pass::kBackward, i, 0, paired});
  }
  for (int64_t i = 0; i < warmup; ++i) steps.push_back({Pass::kBackward, remaining + i, 0});
  return steps;
}

// The k-th forward (or backward) of a stage running vpp model chunks, in Megatron's order: groups of
// pp micro-batches per chunk, chunks ascending forward and descending backward. With vpp = 1, the
// k-th micro-batch.
PipelineStep virtual_step(int64_t k, Pass pass, int64_t pp, int64_t vpp) {
  const int64_t group = pp * vpp;
  int64_t chunk = k % group / pp;
  if (pass != Pass::kForward) chunk = vpp - 1 - chunk;
  return {pass, k / group * pp + k % pp, chunk};
}

std::vector<PipelineStep> interleaved(int64_t pp, int64_t stage, int64_t vpp, int64_t m, bool paired) {
  const int64_t total = m * vpp;
  const auto step = [&](int64_t k, Pass pass) { return virtual_step(k, pass, pp, vpp); };
  const int64_t warmup =
      m == pp ? total : std::min((pp - stage - 1) * 2 + (vpp - 1) * pp + (paired ? 1 : 0), total);
  const int64_t remaining = total - warmup;
  std::vector<PipelineStep> steps;
  steps.reserve(2 * total);
  for (int64_t k = 0; k < warmup; ++k) steps.push_back(step(k, Pass::kForward));
  for (int64_t i = 0; i < remaining; ++i) {
    steps.push_back(step(warmup + i, Pass::kForward));
    steps.push_back(step(i, Pass::kBackward));
    steps.back().overlapped = paired;
  }
  for (int64_t k = remaining; k < total; ++k) steps.push_back(step(k, Pass::kBackward));
  return steps;
}

std::vector<PipelineStep> zero_bubble(int64_t pp, int64_t stage, int64_t vpp, int64_t m) {
  const int64_t total = m * vpp;
  const auto step = [&](int64_t k, Pass pass) { return virtual_step(k, pass, pp, vpp); };
  const int64_t warmup = std::min(pp - stage - 1 + (vpp - 1) * pp, total);
  std::vector<PipelineStep> steps;
  steps.reserve(3 * total);
  int64_t input_grads = 0;
  int64_t weight_grads = 0;
  const auto backward = [&] {
    steps.push_back(step(input_grads, Pass::kInputGrad));
    if (input_grads >= stage) steps.push_back(step(weight_grads++, Pass::kWeightGrad));
    ++input_grads;
  };
  for (int64_t k = 0; k < warmup; ++k) steps.push_back(step(k, Pass::kForward));
  for (int64_t k = warmup; k < total; ++k) {
    steps.push_back(step(k, Pass::kForward));
    backward();
  }
  while (input_grads < total) backward();
  while (weight_grads < total) steps.push_back(step(weight_grads++, Pass::kWeightGrad));
  return steps;
}

std::vector<PipelineStep> zb_v(int64_t pp, int64_t stage, int64_t m) {
  // The pattern needs 2pp - 1 micro-batches; with fewer, the steps of the missing ones are dropped.
  const int64_t n = std::max(2 * pp - 1, m);
  std::vector<PipelineStep> steps;
  steps.reserve(6 * n);
  // Passes so far, per chunk.
  std::array<int64_t, 2> forwards{};
  std::array<int64_t, 2> input_grads{};
  std::array<int64_t, 2> weight_grads{};
  const auto add = [&](Pass pass, int64_t chunk) {
    std::array<int64_t, 2>& count = pass == Pass::kForward     ? forwards
                                    : pass == Pass::kInputGrad ? input_grads
                                                               : weight_grads;
    steps.push_back({pass, count[chunk]++, chunk});
  };
  const auto whole_backward = [&](int64_t chunk) {
    add(Pass::kInputGrad, chunk);
    add(Pass::kWeightGrad, chunk);
  };
  for (int64_t i = 0; i < 2 * (pp - stage) - 1; ++i) add(Pass::kForward, 0);
  for (int64_t i = 0; i < stage; ++i) {
    add(Pass::kForward, 1);
    add(Pass::kForward, 0);
  }
  for (int64_t i = 0; i < pp - stage; ++i) {
    add(Pass::kForward, 1);
    whole_backward(1);
  }
  while (forwards[1] < forwards[0] || forwards[0] < n) {
    if (forwards[0] < n) add(Pass::kForward, 0);
    whole_backward(0);
    add(Pass::kForward, 1);
    whole_backward(1);
  }
  for (int64_t i = 0; i < stage; ++i) {
    add(Pass::kInputGrad, 0);
    add(Pass::kInputGrad, 1);
  }
  for (int64_t i = 0; i < pp - stage; ++i) {
    add(Pass::kInputGrad, 0);
    add(Pass::kWeightGrad, 0);
  }
  for (const int64_t chunk : {1, 0}) {
    while (weight_grads[chunk] < input_grads[chunk]) add(Pass::kWeightGrad, chunk);
  }
  std::erase_if(steps, [m](const PipelineStep& s) { return s.micro_batch >= m; });
  return steps;
}

std::vector<PipelineStep> dualpipe_v(int64_t pp, int64_t stage, int64_t m) {
  const int64_t n = std::max(2 * pp, m);
  std::vector<PipelineStep> steps;
  steps.reserve(6 * n);
  std::array<int64_t, 2> forwards{};
  std::array<int64_t, 2> backwards{};
  std::deque<PipelineStep> held;  // B passes whose W has not run, oldest first
  const auto forward = [&](int64_t chunk) { steps.push_back({Pass::kForward, forwards[chunk]++, chunk}); };
  // A backward, whole or (zero_bubble) its B with the W held back.
  const auto backward = [&](int64_t chunk, bool zero_bubble, bool overlapped = false) {
    const int64_t mb = backwards[chunk]++;
    steps.push_back({zero_bubble ? Pass::kInputGrad : Pass::kBackward, mb, chunk, overlapped});
    if (zero_bubble) held.push_back({Pass::kWeightGrad, mb, chunk});
  };
  const auto weight = [&] {
    steps.push_back(held.front());
    held.pop_front();
  };
  const auto pair = [&](int64_t forward_chunk, int64_t backward_chunk, bool overlapped = true) {
    forward(forward_chunk);
    backward(backward_chunk, false, overlapped);
  };
  const int64_t later = pp - stage - 1;  // stages after this one
  for (int64_t i = 0; i < 2 * later; ++i) forward(0);
  for (int64_t i = 0; i <= stage; ++i) {
    forward(0);
    forward(1);
  }
  for (int64_t i = 0; i < later; ++i) {
    backward(1, true);
    weight();
    forward(1);
  }
  for (int64_t i = 0; i < n - 2 * pp + stage + 1; ++i) {
    pair(0, 1, i > 0 || stage != pp - 1);  // the last stage's first pair runs unoverlapped
    pair(1, 0);
  }
  for (int64_t i = 0; i < later; ++i) {
    backward(1, false);
    pair(1, 0);
  }
  // Both chunks' backwards; from the middle on B only (chunk 1 a round later on even stages).
  for (int64_t i = 0; i <= stage; ++i) {
    const bool middle_on = i >= (stage + 1) / 2;
    backward(1, stage % 2 == 1 ? middle_on : i > (stage + 1) / 2);
    backward(0, middle_on);
  }
  for (int64_t i = 0; i < later; ++i) {
    weight();
    backward(0, true);
  }
  while (!held.empty()) weight();
  // Fewer micro-batches than the pattern needs: drop the missing ones' steps; a backward whose
  // forward partner went runs alone.
  std::vector<PipelineStep> kept;
  kept.reserve(steps.size());
  bool dropped_forward = false;
  for (PipelineStep step : steps) {
    if (step.micro_batch >= m) {
      dropped_forward = step.pass == Pass::kForward;
      continue;
    }
    if (dropped_forward) step.overlapped = false;
    dropped_forward = false;
    kept.push_back(step);
  }
  return kept;
}

}  // namespace

std::vector<PipelineStep> pipeline_schedule(config::Schedule schedule, int64_t pp, int64_t stage, int64_t vpp,
                                            int64_t micro_batches, bool paired) {
  TRAINSIM_WORKLOAD_CHECK(pp >= 1 && stage >= 0 && stage < pp && micro_batches >= 1)
      << "pp " << pp << " stage " << stage << " micro-batches " << micro_batches;
  TRAINSIM_WORKLOAD_CHECK(!paired || schedule == config::Schedule::kOneFOneB ||
                          schedule == config::Schedule::kInterleaved)
      << "forward-backward pairs under " << config::to_string(schedule);
  switch (schedule) {
    case config::Schedule::kGpipe:
      return gpipe(micro_batches);
    case config::Schedule::kOneFOneB:
      return one_f_one_b(pp, stage, micro_batches, paired);
    case config::Schedule::kInterleaved:
      TRAINSIM_WORKLOAD_CHECK(micro_batches % pp == 0) << micro_batches << " micro-batches, pp " << pp;
      return interleaved(pp, stage, vpp, micro_batches, paired);
    case config::Schedule::kZeroBubble:
      TRAINSIM_WORKLOAD_CHECK(vpp == 1 || micro_batches % pp == 0)
          << micro_batches << " micro-batches, pp " << pp << ", vpp " << vpp;
      return zero_bubble(pp, stage, vpp, micro_batches);
    case config::Schedule::kZbV:
      TRAINSIM_WORKLOAD_CHECK(vpp == 2) << "zb-v with vpp " << vpp;
      return zb_v(pp, stage, micro_batches);
    case config::Schedule::kDualPipeV:
      TRAINSIM_WORKLOAD_CHECK(vpp == 2) << "dualpipev with vpp " << vpp;
      return dualpipe_v(pp, stage, micro_batches);
  }
  return {};
}

SteadyStateCounts steady_state_counts(config::Schedule schedule, int64_t pp, int64_t vpp, bool paired) {
  // The chunked schedules other than the V-shaped ones take micro-batches in rounds of pp.
  const int64_t step = config::micro_batches_multiple_of_pp(schedule, vpp) ? pp : 1;
  // Forward-backward pairs start one count later: the all-forward interleaved count (m = pp) and a
  // one-stage 1F1B of one micro-batch have none.
  if (paired) {
    const SteadyStateCounts unpaired = steady_state_counts(schedule, pp, vpp, false);
    return {unpaired.more, unpaired.more + step};
  }
  // ZB-H1 holds back up to pp - 1 weight-gradient passes per stage, so it repeats itself only from
  // about 2pp micro-batches on.
  const int64_t more = config::v_shaped_schedule(schedule)                    ? 2 * pp + 1
                       : vpp > 1 || config::split_backward_schedule(schedule) ? 2 * pp
                       : schedule == config::Schedule::kGpipe                 ? 2
                                                                              : std::max<int64_t>(pp, 2);
  return {more - step, more};
}

}  // namespace trainsim::workload
