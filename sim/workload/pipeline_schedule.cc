#include "sim/workload/pipeline_schedule.h"

#include <algorithm>

#include "sim/workload/errors.h"

namespace trainsim::workload {
namespace {

std::vector<PipelineStep> gpipe(int64_t m) {
  std::vector<PipelineStep> steps;
  steps.reserve(2 * m);
  for (int64_t i = 0; i < m; ++i) steps.push_back({true, i, 0});
  for (int64_t i = 0; i < m; ++i) steps.push_back({false, i, 0});
  return steps;
}

std::vector<PipelineStep> one_f_one_b(int64_t pp, int64_t stage, int64_t m) {
  const int64_t warmup = std::min(pp - stage - 1, m);
  const int64_t remaining = m - warmup;
  std::vector<PipelineStep> steps;
  steps.reserve(2 * m);
  for (int64_t i = 0; i < warmup; ++i) steps.push_back({true, i, 0});
  for (int64_t i = 0; i < remaining; ++i) {
    steps.push_back({true, warmup + i, 0});
    steps.push_back({false, i, 0});
  }
  for (int64_t i = 0; i < warmup; ++i) steps.push_back({false, remaining + i, 0});
  return steps;
}

std::vector<PipelineStep> interleaved(int64_t pp, int64_t stage, int64_t vpp, int64_t m) {
  const int64_t total = m * vpp;
  const int64_t group = pp * vpp;
  const auto step = [&](int64_t k, bool forward) {
    const int64_t in_group = k % group;
    int64_t chunk = in_group / pp;
    if (!forward) chunk = vpp - 1 - chunk;
    return PipelineStep{forward, (k / group) * pp + k % pp, chunk};
  };
  const int64_t warmup = m == pp ? total : std::min((pp - stage - 1) * 2 + (vpp - 1) * pp, total);
  const int64_t remaining = total - warmup;
  std::vector<PipelineStep> steps;
  steps.reserve(2 * total);
  for (int64_t k = 0; k < warmup; ++k) steps.push_back(step(k, true));
  for (int64_t i = 0; i < remaining; ++i) {
    steps.push_back(step(warmup + i, true));
    steps.push_back(step(i, false));
  }
  for (int64_t k = remaining; k < total; ++k) steps.push_back(step(k, false));
  return steps;
}

}  // namespace

std::vector<PipelineStep> pipeline_schedule(config::Schedule schedule, int64_t pp, int64_t stage, int64_t vpp,
                                            int64_t micro_batches) {
  TRAINSIM_WORKLOAD_CHECK(pp >= 1 && stage >= 0 && stage < pp && micro_batches >= 1)
      << "pp " << pp << " stage " << stage << " micro-batches " << micro_batches;
  switch (schedule) {
    case config::Schedule::kGpipe:
      return gpipe(micro_batches);
    case config::Schedule::kOneFOneB:
      return one_f_one_b(pp, stage, micro_batches);
    case config::Schedule::kInterleaved:
      TRAINSIM_WORKLOAD_CHECK(micro_batches % pp == 0) << micro_batches << " micro-batches, pp " << pp;
      return interleaved(pp, stage, vpp, micro_batches);
  }
  return {};
}

}  // namespace trainsim::workload
