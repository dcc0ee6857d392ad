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

void CollectivesInFlight::change(int delta, double now_s) {
  count_ += delta;
  if (history_.back().first == now_s) {
    history_.back().second = count_;
  } else {
    history_.emplace_back(now_s, count_);
  }
}

bool CollectivesInFlight::after_instant(double t_s) {
  while (history_.size() > 1 && history_[1].first <= t_s) history_.pop_front();
  return history_.front().second > 0;
}

bool dispatched(workload::OpKind kind) {
  return kind != workload::OpKind::kAlloc && kind != workload::OpKind::kFree &&
         kind != workload::OpKind::kStreamWait;
}

HostDispatch::HostDispatch(const workload::Graph& graph, double dispatch_s)
    : graph_(graph), dispatch_s_(dispatch_s), issued_s_(graph.size(), 0.0) {}

void HostDispatch::begin_iteration(double now_s) {
  next_ = 0;
  cursor_s_ = now_s;
  waiting_for_ = workload::kNoOp;
}

std::optional<double> HostDispatch::issue_s(workload::OpId id) {
  while (next_ <= id) {
    if (waiting_for_ != workload::kNoOp) return std::nullopt;
    const workload::Op& op = graph_.op(next_);
    if (dispatched(op.kind)) cursor_s_ += dispatch_s_;
    issued_s_[next_] = cursor_s_;
    if (op.kind == workload::OpKind::kHostSync) waiting_for_ = next_;
    ++next_;
  }
  return issued_s_[id];
}

void HostDispatch::finished(workload::OpId id, double now_s) {
  if (id != waiting_for_) return;
  waiting_for_ = workload::kNoOp;
  cursor_s_ = std::max(cursor_s_, now_s);
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
