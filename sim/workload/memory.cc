#include "sim/workload/memory.h"

#include <algorithm>

#include "sim/workload/errors.h"

namespace trainsim::workload {

MemoryTimeline memory_timeline(const Graph& graph) {
  MemoryTimeline t;
  CategoryBytes hbm{}, host{};
  double hbm_total = 0, host_total = 0;
  std::vector<bool> live(static_cast<size_t>(graph.info.buffers), false);
  for (OpId id = 0; id < graph.size(); ++id) {
    const Op& op = graph.op(id);
    if (op.kind != OpKind::kAlloc && op.kind != OpKind::kFree) continue;
    const BufferCall& b = op.buffer;
    TRAINSIM_WORKLOAD_CHECK(b.buffer >= 0 && static_cast<size_t>(b.buffer) < live.size())
        << "op " << id << " names buffer " << b.buffer;
    const bool alloc = op.kind == OpKind::kAlloc;
    TRAINSIM_WORKLOAD_CHECK(live[b.buffer] != alloc)
        << "op " << id << " (" << op_name(op) << ") " << (alloc ? "allocates live" : "frees dead")
        << " buffer " << b.buffer;
    live[b.buffer] = alloc;
    const double delta = alloc ? op.bytes : -op.bytes;
    const int c = static_cast<int>(b.category);
    if (b.space == MemorySpace::kHbm) {
      hbm[c] += delta;
      hbm_total += delta;
      t.hbm_max[c] = std::max(t.hbm_max[c], hbm[c]);
      if (hbm_total > t.peak_hbm_bytes) {
        t.peak_hbm_bytes = hbm_total;
        t.hbm_at_peak = hbm;
        t.hbm_peak_op = id;
      }
    } else {
      host[c] += delta;
      host_total += delta;
      if (host_total > t.peak_host_bytes) {
        t.peak_host_bytes = host_total;
        t.host_at_peak = host;
      }
    }
  }
  return t;
}

double peak_host_bytes_per_node(const ParallelPlan& plan, const std::vector<double>& class_peaks,
                                int64_t gpus_per_node) {
  const int64_t per_node = std::max<int64_t>(gpus_per_node, 1);
  double busiest = 0;
  double node = 0;
  for (int64_t rank = 0; rank < plan.world_size(); ++rank) {
    if (rank % per_node == 0) node = 0;
    const int32_t c = plan.class_of(rank);
    TRAINSIM_WORKLOAD_CHECK(static_cast<size_t>(c) < class_peaks.size()) << "class " << c;
    node += class_peaks[c];
    busiest = std::max(busiest, node);
  }
  return busiest;
}

}  // namespace trainsim::workload
