// The rules by which one rank's ops share its GPU, written once for the two schedulers that apply
// them: the engine, which plays the graphs on SimGrid, and the closed-form estimate, which lays one
// graph out without an event simulation. Free of SimGrid.
//
// - Order: an op starts once its predecessors have finished (the graph encodes stream order).
// - Lanes: with two lanes of kernels (workload::Stream::kCompute2, DualPipe's overlapped pairs) the
//   kernels take the GPU one at a time, in the order they became ready.
// - Overlap: a kernel that starts while a collective of its rank is in flight runs
//   ComputeModel::comm_compute_slowdown slower; a collective that begins or ends at the kernel's
//   start counts as it stands once every event of that instant has happened (CollectivesInFlight).
// - Host: the rank's host thread issues the ops in program order (op id order), each op that starts
//   GPU work taking the stack's host dispatch time, and waits at every host synchronisation; no op
//   starts before it is issued (HostDispatch). A GPU whose kernels are shorter than their dispatch
//   waits for its host.
// - Memory: every allocation and free counts when its op runs (MemoryTracker).
#ifndef TRAINSIM_SIM_COST_RANK_SCHEDULE_H_
#define TRAINSIM_SIM_COST_RANK_SCHEDULE_H_

#include <array>
#include <deque>
#include <limits>
#include <optional>
#include <utility>
#include <vector>

#include "sim/cost/compute_model.h"
#include "sim/workload/graph.h"

namespace trainsim::cost {

// Whether `graph` holds kernels on the second lane (workload::Stream::kCompute2).
bool has_two_lanes(const workload::Graph& graph);

// How long a kernel of `duration_s` runs when it starts with (`collective_in_flight`) or without a
// collective of its rank in flight.
double kernel_time_s(double duration_s, bool collective_in_flight, const ComputeModel& compute);

// Whether issuing `kind` from the host costs a dispatch: kernels, collectives, sends and receives, copies
// and host synchronisations (allocations, frees and stream waits are bookkeeping).
bool dispatched(workload::OpKind kind);

// The host thread of one rank issuing its graph's ops in program order: each dispatched op takes
// `dispatch_s` of host time and is issued when that ends; a host synchronisation
// (workload::OpKind::kHostSync) holds the host until it has finished, so what follows it is issued
// after. The schedulers model the host only when the stack gives a dispatch time
// (ComputeModel::host_dispatch_s() > 0); without one an op starts as soon as its predecessors end.
class HostDispatch {
 public:
  // Keeps a reference to `graph`, which must outlive this.
  HostDispatch(const workload::Graph& graph, double dispatch_s);

  // The host begins issuing the graph's ops from the first, at `now_s`.
  void begin_iteration(double now_s);
  // When op `id` is issued in the current iteration, or nullopt while the host waits for a
  // synchronisation before it that has not finished.
  std::optional<double> issue_s(workload::OpId id);
  // Op `id` finished at `now_s`: a synchronisation releases the host then.
  void finished(workload::OpId id, double now_s);

 private:
  const workload::Graph& graph_;
  double dispatch_s_;
  std::vector<double> issued_s_;                  // per op of the current iteration, valid below next_
  workload::OpId next_ = 0;                       // the first op not yet issued
  double cursor_s_ = 0;                           // the host's time after issuing the ops before next_
  workload::OpId waiting_for_ = workload::kNoOp;  // the synchronisation holding the host
};

// The collectives of one rank in flight over time, for the overlap rule where the events of one
// instant happen in no fixed order (the SimGrid engine's actors): a kernel that starts at t runs
// slower when a collective is in flight once every event at t has happened (as the ideal network's
// event loop, which starts kernels last, orders them). The kernel asks when its unslowed time has
// passed, so that every event of its start instant has happened by then.
class CollectivesInFlight {
 public:
  // `delta` collectives begin (> 0) or end (< 0) at `now_s`, which never decreases.
  void change(int delta, double now_s);
  // Whether one was in flight after every change at `t_s`. Queries come in non-decreasing `t_s`, at
  // or after the last change at t_s; what happened before `t_s` is forgotten.
  bool after_instant(double t_s);

 private:
  int count_ = 0;
  // (time, count after that time's last change), oldest first; starts with no collective.
  std::deque<std::pair<double, int>> history_{{-std::numeric_limits<double>::infinity(), 0}};
};

// One rank's device (HBM) and pinned host memory as its allocations and frees run.
class MemoryTracker {
 public:
  // `record_samples`: keep (time, HBM in use) after every HBM change (hbm_samples).
  explicit MemoryTracker(bool record_samples = false) : record_samples_(record_samples) {}

  // Applies `op` (workload::OpKind::kAlloc or kFree; other kinds are ignored) at `now_s`.
  void apply(const workload::Op& op, double now_s);

  double peak_hbm_bytes() const { return peak_hbm_bytes_; }
  // HBM in use per memory category at the moment of the peak.
  const std::array<double, workload::kMemoryCategoryCount>& hbm_at_peak_bytes() const { return at_peak_; }
  double peak_host_bytes() const { return peak_host_bytes_; }
  std::vector<std::pair<double, double>>& hbm_samples() { return samples_; }

 private:
  bool record_samples_;
  double hbm_bytes_ = 0;
  double host_bytes_ = 0;
  std::array<double, workload::kMemoryCategoryCount> by_category_{};
  std::array<double, workload::kMemoryCategoryCount> at_peak_{};
  double peak_hbm_bytes_ = 0;
  double peak_host_bytes_ = 0;
  std::vector<std::pair<double, double>> samples_;
};

}  // namespace trainsim::cost

#endif  // TRAINSIM_SIM_COST_RANK_SCHEDULE_H_
