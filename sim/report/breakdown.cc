#include "sim/report/breakdown.h"

#include <algorithm>

#include <fmt/format.h>

namespace trainsim::report {
namespace {

using workload::OpId;
using workload::OpKind;

// A host synchronisation of an offload loop (FPDT's), whose time is offload stall; any other (a MoE
// dispatcher waiting for its token counts) leaves the GPU waiting for its host: idle.
bool offload_sync(const workload::Op& op) {
  return op.kind == OpKind::kHostSync && op.label == workload::OpLabel::kHostSync;
}

// Exposed communication behind `op` (a collective, or point-to-point traffic that is not the pipeline's).
void add_exposed(Breakdown& b, const workload::Op& op, double seconds) {
  b.exposed_comm_s += seconds;
  const std::string key =
      op.kind == OpKind::kCollective
          ? fmt::format("{} {}", workload::to_string(op.collective.kind),
                        workload::to_string(op.collective.group.kind))
          : fmt::format("{} {}", workload::to_string(op.kind), workload::to_string(op.label));
  b.exposed_comm_by_collective_s[key] += seconds;
}

// Adds a wait that ended when `blocker` finished: pipeline sends/receives are bubble, other
// point-to-point traffic (ring attention's K/V passes) is communication.
void add_wait(Breakdown& b, const workload::Op* blocker, double seconds) {
  if (blocker == nullptr) {
    b.idle_s += seconds;
    return;
  }
  switch (blocker->kind) {
    case OpKind::kCollective:
      add_exposed(b, *blocker, seconds);
      return;
    case OpKind::kSend:
    case OpKind::kRecv:
      if (blocker->label == workload::OpLabel::kPpComm) {
        b.bubble_s += seconds;
      } else {
        add_exposed(b, *blocker, seconds);
      }
      return;
    case OpKind::kCopy:
      b.offload_stall_s += seconds;
      return;
    case OpKind::kHostSync:
      (offload_sync(*blocker) ? b.offload_stall_s : b.idle_s) += seconds;
      return;
    case OpKind::kGemm:  // a kernel, an ordering or bookkeeping: what the GPU waited for is not traffic
    case OpKind::kAttentionForward:
    case OpKind::kAttentionBackward:
    case OpKind::kMemory:
    case OpKind::kOptimizerStep:
    case OpKind::kStreamWait:
    case OpKind::kAlloc:
    case OpKind::kFree:
      b.idle_s += seconds;
      return;
  }
}

// The predecessor of `id` that finished last (the one it waited for), following zero-duration
// bookkeeping ops (allocations) back to what they waited for; kNoOp when none.
OpId blocker_of(const workload::Graph& graph, const engine::RankRun& run, OpId id) {
  OpId current = id;
  for (int depth = 0; depth < 64; ++depth) {
    OpId latest = workload::kNoOp;
    for (const OpId pred : graph.predecessors(current)) {
      if (latest == workload::kNoOp || run.end_s[pred] > run.end_s[latest]) latest = pred;
    }
    if (latest == workload::kNoOp) return workload::kNoOp;
    const OpKind kind = graph.op(latest).kind;
    if (kind != OpKind::kAlloc && kind != OpKind::kFree && kind != OpKind::kStreamWait) return latest;
    current = latest;
  }
  return workload::kNoOp;
}

// Attributes the wait of `waiter` over [from_s, to_s). A wait for a collective splits at the
// collective's start: before it, the rank waited for what the collective waited for (a pipeline
// message that Megatron's scatter/gather or Megatron-SP's backward all-gathers is bubble), after it
// for the communication.
void attribute_wait(Breakdown& b, const workload::Graph& graph, const engine::RankRun& run, OpId waiter,
                    double from_s, double to_s) {
  const OpId blocker = blocker_of(graph, run, waiter);
  if (blocker == workload::kNoOp) {
    b.idle_s += to_s - from_s;
    return;
  }
  // Past the blocker's end the op waited for its host to issue it (cost::HostDispatch): idle.
  const double blocked_until = std::clamp(run.end_s[blocker], from_s, to_s);
  b.idle_s += to_s - blocked_until;
  to_s = blocked_until;
  if (to_s <= from_s) return;
  const workload::Op& op = graph.op(blocker);
  if (op.kind == OpKind::kCollective) {
    const double split_s = std::clamp(run.start_s[blocker], from_s, to_s);
    if (split_s > from_s) attribute_wait(b, graph, run, blocker, from_s, split_s);
    add_exposed(b, op, to_s - split_s);
    return;
  }
  add_wait(b, &op, to_s - from_s);
}

}  // namespace

Breakdown attribute_time(const workload::Graph& graph, const engine::RankRun& run, double start_s,
                         double end_s) {
  std::vector<OpId> kernels;
  for (OpId id = 0; id < graph.size(); ++id) {
    const workload::Op& op = graph.op(id);
    if (workload::compute_stream(op.stream) &&
        (workload::is_kernel(op.kind) || op.kind == OpKind::kHostSync)) {
      kernels.push_back(id);
    }
  }
  // Kernels from when they ran (later than issued when the other lane of an overlapped pair held
  // the GPU).
  std::sort(kernels.begin(), kernels.end(), [&run](OpId a, OpId b) {
    return run.launch_s[a] != run.launch_s[b] ? run.launch_s[a] < run.launch_s[b] : a < b;
  });
  Breakdown b;
  double cursor = start_s;
  for (const OpId id : kernels) {
    const double begin = std::max(run.launch_s[id], start_s);
    const double finish = std::min(run.end_s[id], end_s);
    if (begin > cursor) attribute_wait(b, graph, run, id, cursor, begin);
    if (finish > begin) {
      const workload::Op& op = graph.op(id);
      const double busy = finish - std::max(begin, cursor);
      if (op.kind == OpKind::kHostSync) {
        (offload_sync(op) ? b.offload_stall_s : b.idle_s) += busy;
      } else {
        b.compute_s += busy;
        if (op.layer < 0) b.outside_layers_s += busy;
      }
    }
    cursor = std::max(cursor, finish);
  }
  if (end_s > cursor) {
    // After the last kernel: whatever finished last on the rank kept it busy.
    OpId last = workload::kNoOp;
    for (OpId id = 0; id < graph.size(); ++id) {
      if (last == workload::kNoOp || run.end_s[id] > run.end_s[last]) last = id;
    }
    add_wait(b, last == workload::kNoOp ? nullptr : &graph.op(last), end_s - cursor);
  }
  return b;
}

nlohmann::json to_json(const Breakdown& b) {
  nlohmann::json out = nlohmann::json::object();
  for (const BreakdownPart& part : kBreakdownParts) out[part.key] = b.*part.seconds;
  return out;
}

Breakdown breakdown_from_json(const nlohmann::json& parts) {
  Breakdown b;
  for (const BreakdownPart& part : kBreakdownParts) b.*part.seconds = parts.at(part.key).get<double>();
  return b;
}

nlohmann::json to_json(const StageBreakdown& stage) {
  nlohmann::json row = to_json(stage.breakdown);
  row.update({{"stage", stage.stage},
              {"layers", stage.layers},
              {"rank", stage.rank},
              {"busy_until_s", stage.busy_until_s}});
  return row;
}

}  // namespace trainsim::report
