#include "sim/workload/comm_log.h"

#include <map>
#include <tuple>

namespace trainsim::workload {
namespace {

CommKind comm_kind(CollectiveKind kind) {
  switch (kind) {
    case CollectiveKind::kAllReduce:
      return CommKind::kAllReduce;
    case CollectiveKind::kAllGather:
      return CommKind::kAllGather;
    case CollectiveKind::kReduceScatter:
      return CommKind::kReduceScatter;
    case CollectiveKind::kAllToAll:
      return CommKind::kAllToAll;
    case CollectiveKind::kBarrier:
      return CommKind::kBarrier;
  }
  return CommKind::kBarrier;
}

// The group kind whose axis separates two ranks that differ on exactly one axis (pp for pipeline
// peers, sp for ring attention); world otherwise.
GroupKind peer_group(const ParallelPlan& plan, int64_t a, int64_t b) {
  const Coords x = plan.coords(a), y = plan.coords(b);
  int differing = -1;
  for (int i = 0; i < kAxisCount; ++i) {
    if (x.at[i] == y.at[i]) continue;
    if (differing >= 0) return GroupKind::kWorld;
    differing = i;
  }
  switch (static_cast<Axis>(differing < 0 ? 0 : differing)) {
    case Axis::kTp:
      return GroupKind::kTp;
    case Axis::kSp:
      return GroupKind::kSp;
    case Axis::kDp:
      return GroupKind::kDp;
    case Axis::kPp:
      return GroupKind::kPp;
  }
  return GroupKind::kWorld;
}

}  // namespace

double volume_factor(CommKind kind) {
  switch (kind) {
    case CommKind::kAllReduce:
    case CommKind::kBarrier:
      return 2;
    case CommKind::kAllGather:
    case CommKind::kReduceScatter:
    case CommKind::kAllToAll:
    case CommKind::kSend:
      return 1;
    case CommKind::kRecv:
      return 0;
  }
  return 0;
}

double wire_factor(CommKind kind, int64_t n) {
  const double share = n > 0 ? static_cast<double>(n - 1) / static_cast<double>(n) : 0.0;
  switch (kind) {
    case CommKind::kAllReduce:
    case CommKind::kBarrier:
      return 2 * share;
    case CommKind::kAllGather:
    case CommKind::kReduceScatter:
    case CommKind::kAllToAll:
      return share;
    case CommKind::kSend:
      return 1;
    case CommKind::kRecv:
      return 0;
  }
  return 0;
}

std::vector<CommLogEntry> comm_log(const ParallelPlan& plan, const Graph& graph) {
  std::map<std::tuple<int, int, double>, CommLogEntry> entries;
  for (const Op& op : graph.ops()) {
    CommKind kind;
    GroupKind group;
    int64_t size = 2;
    if (op.kind == OpKind::kCollective) {
      kind = comm_kind(op.collective.kind);
      group = op.collective.group.kind;
      size = plan.group_size(group);
    } else if (op.kind == OpKind::kSend || op.kind == OpKind::kRecv) {
      kind = op.kind == OpKind::kSend ? CommKind::kSend : CommKind::kRecv;
      group = peer_group(plan, graph.info.rank, op.p2p.peer);
    } else {
      continue;
    }
    CommLogEntry& e = entries[{static_cast<int>(kind), static_cast<int>(group), op.bytes}];
    e.kind = kind;
    e.group = group;
    e.group_size = size;
    e.bytes_per_call = op.bytes;
    e.calls += 1;
    e.total_bytes += op.bytes;
    e.volume_bytes += op.bytes * volume_factor(kind);
    e.wire_bytes += op.bytes * wire_factor(kind, size);
  }
  std::vector<CommLogEntry> log;
  log.reserve(entries.size());
  for (auto& [key, e] : entries) log.push_back(e);
  return log;
}

std::string_view to_string(CommKind kind) {
  switch (kind) {
    case CommKind::kAllReduce:
      return "all_reduce";
    case CommKind::kAllGather:
      return "all_gather";
    case CommKind::kReduceScatter:
      return "reduce_scatter";
    case CommKind::kAllToAll:
      return "all_to_all";
    case CommKind::kBarrier:
      return "barrier";
    case CommKind::kSend:
      return "send";
    case CommKind::kRecv:
      return "recv";
  }
  return "?";
}

}  // namespace trainsim::workload
