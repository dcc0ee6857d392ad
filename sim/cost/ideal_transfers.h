// What `--network ideal` charges the ops of a rank's graph that move bytes (cost/alpha_beta.h):
// collectives over their group's tier, sends and receives between two ranks, host copies. Shared by
// the closed-form estimate and the per-layer budget.
#ifndef TRAINSIM_SIM_COST_IDEAL_TRANSFERS_H_
#define TRAINSIM_SIM_COST_IDEAL_TRANSFERS_H_

#include <cstdint>
#include <map>
#include <utility>

#include "sim/config/scenario.h"
#include "sim/cost/alpha_beta.h"
#include "sim/workload/graph.h"
#include "sim/workload/plan.h"

namespace trainsim::cost {

class IdealTransfers {
 public:
  // Keeps a reference to `plan`, which must outlive this.
  IdealTransfers(const config::Scenario& scenario, const workload::ParallelPlan& plan);

  // The network or host-link time of `op` on `rank`; 0 for ops that move nothing.
  double op_s(const workload::Op& op, int64_t rank);

 private:
  const GroupLinks& group_links_of(workload::GroupId group);

  const workload::ParallelPlan& plan_;
  IdealTiers tiers_;
  std::map<std::pair<int, int32_t>, GroupLinks> groups_;  // by group kind and index
};

}  // namespace trainsim::cost

#endif  // TRAINSIM_SIM_COST_IDEAL_TRANSFERS_H_
