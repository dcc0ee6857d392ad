#include "sim/workload/mirrors.h"

#include <algorithm>
#include <map>

namespace trainsim::workload {
namespace {

constexpr Axis kReplicaAxes[] = {Axis::kTp, Axis::kSp, Axis::kDp};

}  // namespace

int64_t Mirrors::translations() const {
  int64_t n = 1;
  for (const Axis axis : kReplicaAxes) n *= plan_.degree(axis);
  return n;
}

int64_t Mirrors::translate(int64_t rank, int64_t t) const {
  Coords c = plan_.coords(rank);
  for (const Axis axis : kReplicaAxes) {
    const int64_t degree = plan_.degree(axis);
    c[axis] = (c[axis] + t % degree) % degree;
    t /= degree;
  }
  return plan_.rank_of(c);
}

bool Mirrors::in_step(int64_t rank, int64_t t) const {
  const int64_t dp = plan_.coords(translate(rank, t)).dp();
  const std::vector<int64_t> experts = plan_.members(plan_.group_of(rank, GroupKind::kEp));
  return std::any_of(experts.begin(), experts.end(), [&](int64_t m) { return plan_.coords(m).dp() == dp; });
}

std::vector<Mirror<GroupId>> Mirrors::groups(int64_t rank, GroupKind kind) const {
  const GroupId own = plan_.group_of(rank, kind);
  std::map<int32_t, bool> in_step_by_index;
  for (int64_t t = 1; t < translations(); ++t) {
    const GroupId g = plan_.group_of(translate(rank, t), kind);
    if (g.index != own.index) in_step_by_index[g.index] |= in_step(rank, t);
  }
  std::vector<Mirror<GroupId>> out;
  out.reserve(in_step_by_index.size());
  for (const auto& [index, step] : in_step_by_index) out.push_back({GroupId{kind, index}, step});
  return out;
}

std::vector<Mirror<RankPair>> Mirrors::sends(int64_t src, int64_t dst) const {
  std::vector<Mirror<RankPair>> out;
  for (int64_t t = 1; t < translations(); ++t) {
    out.push_back({RankPair{translate(src, t), translate(dst, t)}, in_step(src, t)});
  }
  return out;
}

std::vector<Mirror<int64_t>> Mirrors::ranks(int64_t rank) const {
  std::vector<Mirror<int64_t>> out;
  for (int64_t t = 1; t < translations(); ++t) out.push_back({translate(rank, t), in_step(rank, t)});
  return out;
}

}  // namespace trainsim::workload
