// Memory use of a rank, from its graph's alloc/free ops: nothing here is estimated separately.
// Ops are walked in op order, the order the framework issues them from the host, which is the
// order PyTorch's caching allocator sees allocations and frees; fragmentation and the allocator's
// rounding are not modelled.
#ifndef TRAINSIM_SIM_WORKLOAD_MEMORY_H_
#define TRAINSIM_SIM_WORKLOAD_MEMORY_H_

#include <array>
#include <cstdint>
#include <vector>

#include "sim/workload/graph.h"
#include "sim/workload/plan.h"

namespace trainsim::workload {

using CategoryBytes = std::array<double, kMemoryCategoryCount>;  // indexed by MemoryCategory

struct MemoryTimeline {
  double peak_hbm_bytes = 0;
  CategoryBytes hbm_at_peak{};  // by category at the first moment HBM use peaks (sums to the peak)
  CategoryBytes hbm_max{};      // each category's own maximum over the iteration
  OpId hbm_peak_op = kNoOp;     // the allocation that reached the peak
  double peak_host_bytes = 0;   // pinned host memory of this rank (offload, CPU checkpoints)
  CategoryBytes host_at_peak{};
};

// Aborts if the graph frees a buffer it did not allocate.
MemoryTimeline memory_timeline(const Graph& graph);

// Peak host memory of the busiest node: the ranks of node k are k*gpus_per_node ..
// (k+1)*gpus_per_node-1; each rank's peak is its class representative's, and the peaks of a node's
// ranks are summed (exact when they run in lockstep, an upper bound otherwise). `class_peaks` is
// indexed by symmetry class. gpus_per_node < 1 counts every rank as its own node.
double peak_host_bytes_per_node(const ParallelPlan& plan, const std::vector<double>& class_peaks,
                                int64_t gpus_per_node);

}  // namespace trainsim::workload

#endif  // TRAINSIM_SIM_WORKLOAD_MEMORY_H_
