// What a collapsed run does not simulate: the communication of the ranks that its simulated ranks
// stand for. By the plan's symmetry (plan.h) every rank of a stage runs its stage's graph up to
// renaming peers and groups, so when a simulated rank starts a collective, a send or a host copy,
// every other rank of its stage starts the same one at the same instant, on its own group or to its
// own peer. Those ranks are the translations of the simulated one along the tp, sp and dp axes
// (coordinates modulo the degrees); the sends a graph makes, pipeline sends along pp and ring
// attention's around its sp ring, map onto sends of the full job under every translation.
//
// In step: the ranks of a stage that meet the simulated rank in every layer, so that the slowest of
// them holds it back there (as a straggler holds back its stage): its tensor- and sequence-parallel
// peers, and with expert parallelism the ranks of the data-parallel coordinates of its expert group
// (their all-to-alls). That is the translations that keep the rank's dp coordinate among its
// expert group's. The other data-parallel replicas meet it only in data-parallel collectives.
#ifndef TRAINSIM_SIM_WORKLOAD_MIRRORS_H_
#define TRAINSIM_SIM_WORKLOAD_MIRRORS_H_

#include <cstdint>
#include <vector>

#include "sim/workload/plan.h"

namespace trainsim::workload {

// A mirror of one of a simulated rank's communications, and whether its ranks are in step with it.
template <class T>
struct Mirror {
  T of;
  bool in_step = false;
};

struct RankPair {
  int64_t src = 0;
  int64_t dst = 0;
};

class Mirrors {
 public:
  // `plan` must outlive the object. The simulated ranks are one replica, one rank per stage
  // (simulated_ranks).
  explicit Mirrors(const ParallelPlan& plan) : plan_(plan) {}

  // The groups of `kind` other than `rank`'s own whose members run `rank`'s collectives on `kind` at
  // the same time: the groups of the other ranks of its stage. Ascending index, no repeats; in step
  // when one of its members is.
  std::vector<Mirror<GroupId>> groups(int64_t rank, GroupKind kind) const;
  // The sends the other ranks of src's stage make at the same time as `src` to `dst`, one per
  // translation but the identity.
  std::vector<Mirror<RankPair>> sends(int64_t src, int64_t dst) const;
  // The other ranks of `rank`'s stage (its symmetry class), which copy to and from host memory when
  // it does, one per translation but the identity.
  std::vector<Mirror<int64_t>> ranks(int64_t rank) const;

 private:
  // The number of translations (tp x sp x dp), and where translation `t` takes `rank`.
  int64_t translations() const;
  int64_t translate(int64_t rank, int64_t t) const;
  // Per dp coordinate, whether the ranks there are in step with `rank` (its expert group's).
  std::vector<bool> in_step_dps(int64_t rank) const;

  const ParallelPlan& plan_;
};

}  // namespace trainsim::workload

#endif  // TRAINSIM_SIM_WORKLOAD_MIRRORS_H_
