#include "sim/workload/mirrors.h"

#include <array>
#include <map>

namespace trainsim::workload {
namespace {

constexpr std::array<Axis, 3> kReplicaAxes = {Axis::kTp, Axis::kSp, Axis::kDp};

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

std::vector<bool> Mirrors::in_step_dps(int64_t rank) const {
  std::vector<bool> out(static_cast<size_t>(plan_.degree(Axis::kDp)), false);
  for (const int64_t m : plan_.members(plan_.group_of(rank, GroupKind::kEp))) {
    out[static_cast<size_t>(plan_.coords(m).dp())] = true;
  }
  return out;
}

std::vector<Mirror<GroupId>> Mirrors::groups(int64_t rank, GroupKind kind) const {
  const GroupId own = plan_.group_of(rank, kind);
  const std::vector<bool> in_step = in_step_dps(rank);
  std::map<int32_t, bool> in_step_by_index;
  for (int64_t t = 1; t < translations(); ++t) {
    const int64_t twin = translate(rank, t);
    const GroupId g = plan_.group_of(twin, kind);
    if (g.index != own.index) {
      in_step_by_index[g.index] |= in_step[static_cast<size_t>(plan_.coords(twin).dp())];
    }
  }
  std::vector<Mirror<GroupId>> out;
  out.reserve(in_step_by_index.size());
  for (const auto& [index, step] : in_step_by_index) out.push_back({GroupId{kind, index}, step});
  return out;
}

std::vector<Mirror<RankPair>> Mirrors::sends(int64_t src, int64_t dst) const {
  const std::vector<bool> in_step = in_step_dps(src);
  std::vector<Mirror<RankPair>> out;
  for (int64_t t = 1; t < translations(); ++t) {
    const int64_t twin = translate(src, t);
    out.push_back({RankPair{twin, translate(dst, t)}, in_step[static_cast<size_t>(plan_.coords(twin).dp())]});
  }
  return out;
}

std::vector<Mirror<int64_t>> Mirrors::ranks(int64_t rank) const {
  const std::vector<bool> in_step = in_step_dps(rank);
  std::vector<Mirror<int64_t>> out;
  for (int64_t t = 1; t < translations(); ++t) {
    const int64_t twin = translate(rank, t);
    out.push_back({twin, in_step[static_cast<size_t>(plan_.coords(twin).dp())]});
  }
  return out;
}

}  // namespace trainsim::workload
