#include "sim/workload/runtime_memory.h"

#include <map>
#include <set>
#include <utility>

#include <fmt/format.h>

namespace trainsim::workload {

CommunicatorUse communicator_use(const Graph& graph, const ParallelPlan& plan, int64_t gpus_per_node) {
  const int64_t rank = graph.info.rank;
  const auto same_node = [&](int64_t peer) {
    return gpus_per_node < 1 || peer / gpus_per_node == rank / gpus_per_node;
  };
  constexpr int kSendReceive = kGroupKindCount;  // the connection slot of sends and receives
  std::set<int> collective_groups;
  std::map<int, GroupId> all_to_all_groups;
  std::set<std::pair<int, int64_t>> connections;  // (group kind or kSendReceive, peer)
  for (const Op& op : graph.ops()) {
    if (op.kind == OpKind::kSend || op.kind == OpKind::kRecv) {
      connections.emplace(kSendReceive, op.p2p.peer);
    } else if (op.kind == OpKind::kCollective) {
      const int group = static_cast<int>(op.collective.group.kind);
      if (op.collective.kind == CollectiveKind::kAllToAll) {
        all_to_all_groups.emplace(group, op.collective.group);
      } else {
        collective_groups.insert(group);
      }
    }
  }
  for (const auto& [group, id] : all_to_all_groups) {
    for (const int64_t peer : plan.members(id)) {
      if (peer != rank) connections.emplace(group, peer);
    }
  }
  CommunicatorUse use;
  use.collective_communicators = static_cast<int64_t>(collective_groups.size());
  for (const auto& [slot, peer] : connections) {
    ++(same_node(peer) ? use.p2p_peers_in_node : use.p2p_peers_across_nodes);
  }
  return use;
}

double runtime_memory_bytes(const CommunicatorUse& use, const config::RuntimeMemory& runtime) {
  return runtime.context_bytes +
         static_cast<double>(use.collective_communicators) * runtime.collective_communicator_bytes +
         static_cast<double>(use.p2p_peers_in_node) * runtime.p2p_peer_in_node_bytes +
         static_cast<double>(use.p2p_peers_across_nodes) * runtime.p2p_peer_across_nodes_bytes;
}

void warn_without_runtime_memory(const config::HardwareProfile& profile, WarningLog& warnings) {
  if (profile.runtime_memory) return;
  warnings.add(
      "no-runtime-memory",
      fmt::format("hardware profile {} gives no runtime_memory: peak HBM leaves out the CUDA context and "
                  "NCCL's buffers (1-5 GiB per GPU in the shipped scenarios with the cited figures)",
                  profile.name));
}

}  // namespace trainsim::workload
