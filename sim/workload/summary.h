// Graph-derived numbers of a scenario: what `trainsim analyze` sets against the closed forms.
#ifndef TRAINSIM_SIM_WORKLOAD_SUMMARY_H_
#define TRAINSIM_SIM_WORKLOAD_SUMMARY_H_

#include <cstdint>
#include <vector>

#include "sim/config/scenario.h"
#include "sim/workload/comm_log.h"
#include "sim/workload/graph.h"
#include "sim/workload/memory.h"
#include "sim/workload/plan.h"
#include "sim/workload/runtime_memory.h"

namespace trainsim::workload {

struct ClassSummary {
  SymmetryClass cls;
  size_t ops = 0;
  size_t edges = 0;
  int64_t params_per_rank = 0;    // before ZeRO sharding
  FlopTotals flops;               // of one rank of the class
  MemoryTimeline memory;          // of one rank of the class
  CommunicatorUse communicators;  // what its runtime memory pays for (runtime_memory.h)
  std::vector<CommLogEntry> comm;
};

struct WorkloadSummary {
  std::vector<ClassSummary> classes;
  FlopTotals iteration;    // every rank: Σ class size x the class's totals
  int64_t parameters = 0;  // layout.h model_params
  int64_t gpus_per_node = 0;
  double peak_host_bytes_per_node = 0;
};

// `class_graphs` from build_class_graphs(scenario, plan). Throws PlanError like derive_shapes.
WorkloadSummary summarize(const config::Scenario& scenario, const ParallelPlan& plan,
                          const std::vector<Graph>& class_graphs);

}  // namespace trainsim::workload

#endif  // TRAINSIM_SIM_WORKLOAD_SUMMARY_H_
