#include "sim/workload/simulated_ranks.h"

#include <algorithm>

namespace trainsim::workload {

std::vector<int64_t> simulated_ranks(const config::Scenario& scenario, const ParallelPlan& plan) {
  const int64_t per_node = std::max<int64_t>(1, scenario.cluster.topology.node.gpus);
  Coords replica;  // (0, 0, 0, *) unless a slow NIC says otherwise
  double slowest = 0;
  for (const auto& [node, bandwidth] : scenario.stragglers.nic_bandwidth_by_node()) {
    if (node * per_node >= plan.world_size() || (slowest > 0 && bandwidth >= slowest)) continue;
    slowest = bandwidth;
    replica = plan.coords(node * per_node);
  }
  std::vector<int64_t> ranks;
  for (const SymmetryClass& c : plan.symmetry_classes()) {
    replica[Axis::kPp] = c.stage;
    ranks.push_back(plan.rank_of(replica));
  }
  return ranks;
}

}  // namespace trainsim::workload
