// The kernel speed of every GPU of a scenario, from its `stragglers` section (sim/config/scenario.h):
// 1 is the hardware profile's rate, 0.8 a GPU whose kernels take 1.25 times as long.
#ifndef TRAINSIM_SIM_WORKLOAD_GPU_SPEED_H_
#define TRAINSIM_SIM_WORKLOAD_GPU_SPEED_H_

#include <cstdint>
#include <vector>

#include "sim/config/scenario.h"
#include "sim/workload/plan.h"

namespace trainsim::workload {

// The speed of each rank of `plan` (indexed by rank): the spread's draw (a truncated normal that
// depends on the seed and the rank alone, so a GPU keeps its speed when the cluster grows) times the
// speed of the slow_gpus entry naming the rank or its node. Empty when the scenario slows no GPU.
// `plan` is make_plan(scenario), which refuses entries naming a rank or node outside the cluster
// (rule stragglers-in-cluster: a search or sweep that shrank it).
std::vector<double> gpu_speeds(const config::Scenario& scenario, const ParallelPlan& plan);

// The speed to simulate each of `ranks` at (empty when `speeds` is): its own when every rank is
// simulated (`full`); otherwise the slowest member's of its symmetry class. The representative
// stands for every member, and members run the same graph in lockstep (tensor-parallel collectives
// every layer, the data-parallel reduction every iteration), so the class moves at the pace of its
// slowest member. O(world size).
std::vector<double> simulated_speeds(const std::vector<double>& speeds, const ParallelPlan& plan,
                                     const std::vector<int64_t>& ranks, bool full);

}  // namespace trainsim::workload

#endif  // TRAINSIM_SIM_WORKLOAD_GPU_SPEED_H_
