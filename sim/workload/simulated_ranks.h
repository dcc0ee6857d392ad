// Which ranks a collapsed run simulates.
#ifndef TRAINSIM_SIM_WORKLOAD_SIMULATED_RANKS_H_
#define TRAINSIM_SIM_WORKLOAD_SIMULATED_RANKS_H_

#include <cstdint>
#include <vector>

#include "sim/config/scenario.h"
#include "sim/workload/plan.h"

namespace trainsim::workload {

// One rank per symmetry class (pipeline stage), in class order, all of one replica: the ranks
// sharing a tp, sp and dp coordinate. Without slow NICs that is the classes' representatives
// (coordinates (0, 0, 0, stage)). With slow NICs it is the replica of the first GPU of the node with
// the slowest NICs (the lowest such node on ties), so that the simulated ranks' traffic, pipeline
// sends as well as collectives, crosses that node's NICs as every replica's would in a full run.
// Nodes beyond the plan's world are ignored.
std::vector<int64_t> simulated_ranks(const config::Scenario& scenario, const ParallelPlan& plan);

}  // namespace trainsim::workload

#endif  // TRAINSIM_SIM_WORKLOAD_SIMULATED_RANKS_H_
