#include "sim/cost/ideal_transfers.h"

namespace trainsim::cost {

using workload::OpKind;

IdealTransfers::IdealTransfers(const config::Scenario& scenario, const workload::ParallelPlan& plan)
    : plan_(plan), tiers_(ideal_tiers(scenario)) {}

double IdealTransfers::op_s(const workload::Op& op, int64_t rank) {
  switch (op.kind) {
    case OpKind::kCollective:
      return collective_s(op.collective.kind, plan_.group_size(op.collective.group.kind), op.bytes,
                          group_links_of(op.collective.group));
    case OpKind::kSend:
    case OpKind::kRecv:
      return send_s(tiers_, rank, op.p2p.peer, op.bytes);
    case OpKind::kCopy:
      return copy_s(tiers_, op.bytes);
    case OpKind::kGemm:
    case OpKind::kAttentionForward:
    case OpKind::kAttentionBackward:
    case OpKind::kMemory:
    case OpKind::kOptimizerStep:
    case OpKind::kHostSync:
    case OpKind::kStreamWait:
    case OpKind::kAlloc:
    case OpKind::kFree:
      return 0;
  }
  return 0;
}

const GroupLinks& IdealTransfers::group_links_of(workload::GroupId group) {
  const auto key = std::make_pair(static_cast<int>(group.kind), group.index);
  auto it = groups_.find(key);
  if (it == groups_.end()) it = groups_.emplace(key, group_links(tiers_, plan_.members(group))).first;
  return it->second;
}

}  // namespace trainsim::cost
