#include "sim/measured/activity.h"

#include <algorithm>
#include <cassert>
#include <tuple>

namespace trainsim::measured {

std::string_view to_string(ActivityClass cls) {
  switch (cls) {
    case ActivityClass::kGemm:
      return "gemm";
    case ActivityClass::kAttention:
      return "attention";
    case ActivityClass::kMemory:
      return "memory-bound";
    case ActivityClass::kOptimizer:
      return "optimizer";
    case ActivityClass::kAllReduce:
      return "all-reduce";
    case ActivityClass::kAllGather:
      return "all-gather";
    case ActivityClass::kReduceScatter:
      return "reduce-scatter";
    case ActivityClass::kOtherCollective:
      return "other collective";
    case ActivityClass::kSendRecv:
      return "send/recv, all-to-all";
    case ActivityClass::kHostCopy:
      return "host copy";
  }
  return "?";
}

bool is_compute(ActivityClass cls) { return cls <= ActivityClass::kOptimizer; }

bool is_communication(ActivityClass cls) {
  return cls >= ActivityClass::kAllReduce && cls <= ActivityClass::kSendRecv;
}

namespace {

// Coverage groups of the breakdown, in order of precedence.
enum Group { kCompute, kComm, kCopy, kGroupCount };

Group group_of(ActivityClass cls) {
  if (is_compute(cls)) return kCompute;
  return is_communication(cls) ? kComm : kCopy;
}

}  // namespace

StepProfile profile_step(const std::vector<Activity>& activities, double begin_s, double end_s) {
  assert(end_s >= begin_s);
  StepProfile p;
  p.step_s = end_s - begin_s;
  // Boundaries of the clipped activities: (time, +1 at a start or -1 at an end, group).
  std::vector<std::tuple<double, int, int>> edges;
  edges.reserve(2 * activities.size());
  for (const Activity& a : activities) {
    const double begin = std::max(a.begin_s, begin_s);
    const double end = std::min(a.end_s, end_s);
    if (end < begin || (end == begin && (a.begin_s < begin_s || a.end_s > end_s))) continue;
    ClassTotal& total = p.by_class[static_cast<size_t>(a.cls)];
    total.time_s += end - begin;
    total.count += 1;
    edges.emplace_back(begin, +1, group_of(a.cls));
    edges.emplace_back(end, -1, group_of(a.cls));
  }
  std::sort(edges.begin(), edges.end());
  std::array<int, kGroupCount> open{};
  std::array<double, kGroupCount> covered{};
  double last = begin_s;
  for (const auto& [t, delta, group] : edges) {
    // The span since the last boundary goes to the first group that was running through it.
    for (int g = 0; g < kGroupCount; ++g) {
      if (open[g] > 0) {
        covered[g] += t - last;
        break;
      }
    }
    open[group] += delta;
    last = t;
  }
  p.compute_s = covered[kCompute];
  p.exposed_comm_s = covered[kComm];
  p.exposed_copy_s = covered[kCopy];
  p.idle_s = std::max(0.0, p.step_s - p.compute_s - p.exposed_comm_s - p.exposed_copy_s);
  return p;
}

StepProfile mean_profile(const std::vector<StepProfile>& steps) {
  assert(!steps.empty());
  StepProfile m;
  for (const StepProfile& s : steps) {
    m.step_s += s.step_s;
    for (size_t c = 0; c < m.by_class.size(); ++c) {
      m.by_class[c].time_s += s.by_class[c].time_s;
      m.by_class[c].count += s.by_class[c].count;
    }
    m.compute_s += s.compute_s;
    m.exposed_comm_s += s.exposed_comm_s;
    m.exposed_copy_s += s.exposed_copy_s;
    m.idle_s += s.idle_s;
  }
  const auto n = static_cast<double>(steps.size());
  m.step_s /= n;
  for (ClassTotal& c : m.by_class) {
    c.time_s /= n;
    c.count /= n;
  }
  m.compute_s /= n;
  m.exposed_comm_s /= n;
  m.exposed_copy_s /= n;
  m.idle_s /= n;
  return m;
}

}  // namespace trainsim::measured
