#include "sim/cost/rank_schedule.h"

#include <algorithm>

namespace trainsim::cost {

bool has_two_lanes(const workload::Graph& graph) {
  for (workload::OpId id = 0; id < graph.size(); ++id) {
    if (graph.op(id).stream == workload::Stream::kCompute2) return true;
  }
  return false;
}

double kernel_time_s(double duration_s, bool collective_in_flight, const ComputeModel& compute) {
  return collective_in_flight ? duration_s * (1.0 + compute.comm_compute_slowdown()) : duration_s;
}

void MemoryTracker::apply(const workload::Op& op, double now_s) {
  if (op.kind != workload::OpKind::kAlloc && op.kind != workload::OpKind::kFree) return;
  const double delta = op.kind == workload::OpKind::kAlloc ? op.bytes : -op.bytes;
  if (op.buffer.space == workload::MemorySpace::kHost) {
    host_bytes_ += delta;
    peak_host_bytes_ = std::max(peak_host_bytes_, host_bytes_);
    return;
  }
  hbm_bytes_ += delta;
  by_category_[static_cast<size_t>(op.buffer.category)] += delta;
  if (record_samples_) samples_.emplace_back(now_s, hbm_bytes_);
  if (hbm_bytes_ > peak_hbm_bytes_) {
    peak_hbm_bytes_ = hbm_bytes_;
    at_peak_ = by_category_;
  }
}

}  // namespace trainsim::cost
