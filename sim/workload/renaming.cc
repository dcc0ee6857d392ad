#include "sim/workload/renaming.h"

#include "sim/workload/errors.h"

namespace trainsim::workload {

Renaming::Renaming(const ParallelPlan& plan, int64_t from, int64_t to) {
  TRAINSIM_WORKLOAD_CHECK(plan.class_of(from) == plan.class_of(to))
      << "rank " << to << " cannot run rank " << from << "'s graph: they are in different classes";
  if (from == to) return;
  plan_ = &plan;
  to_ = to;
  const Coords a = plan.coords(from);
  const Coords b = plan.coords(to);
  for (int i = 0; i < kAxisCount; ++i) {
    const int64_t n = plan.degree(static_cast<Axis>(i));
    shift_.at[i] = ((b.at[i] - a.at[i]) % n + n) % n;
  }
}

GroupId Renaming::group(GroupId group) const {
  return plan_ == nullptr ? group : plan_->group_of(to_, group.kind);
}

int64_t Renaming::peer(int64_t peer) const {
  if (plan_ == nullptr) return peer;
  Coords c = plan_->coords(peer);
  for (int i = 0; i < kAxisCount; ++i) {
    c.at[i] = (c.at[i] + shift_.at[i]) % plan_->degree(static_cast<Axis>(i));
  }
  return plan_->rank_of(c);
}

}  // namespace trainsim::workload
