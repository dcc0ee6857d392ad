// Running one rank's graph as another rank of its symmetry class. By the plan's symmetry (plan.h)
// every rank of a pipeline stage runs the same graph up to renaming its groups and peers, so a run
// that simulates every rank needs one graph per class: rank `to` runs the graph built for `from`
// with each collective on its own group of the same kind, and each send and receive to the peer that
// stands to `to` as the graph's peer stands to `from` (shifted by the coordinates that take `from`
// to `to`, modulo the degrees). Tags and sequence numbers are the same on every member.
#ifndef TRAINSIM_SIM_WORKLOAD_RENAMING_H_
#define TRAINSIM_SIM_WORKLOAD_RENAMING_H_

#include <cstdint>

#include "sim/workload/plan.h"

namespace trainsim::workload {

class Renaming {
 public:
  // The identity (a graph run by the rank it was built for).
  Renaming() = default;
  // `from` and `to` must be ranks of `plan` in one symmetry class; `plan` must outlive this.
  Renaming(const ParallelPlan& plan, int64_t from, int64_t to);

  // `to`'s group of `group`'s kind, for a collective of the graph on `group`.
  GroupId group(GroupId group) const;
  // `to`'s peer for a send or receive of the graph with `peer`.
  int64_t peer(int64_t peer) const;

 private:
  const ParallelPlan* plan_ = nullptr;  // nullptr: the identity
  int64_t to_ = 0;
  Coords shift_;  // from `from` to `to`, modulo the degrees
};

}  // namespace trainsim::workload

#endif  // TRAINSIM_SIM_WORKLOAD_RENAMING_H_
