#include "calibrate/collective_kinds.h"

namespace trainsim::calibrate {

using config::CollectiveKind;

const std::vector<CollectiveKind>& measured_collectives() {
  static const std::vector<CollectiveKind> kKinds = {
      CollectiveKind::kAllReduce, CollectiveKind::kAllGather, CollectiveKind::kReduceScatter,
      CollectiveKind::kAllToAll,  CollectiveKind::kSendRecv,  CollectiveKind::kBarrier};
  return kKinds;
}

std::string_view nccl_tests_program(CollectiveKind kind) {
  switch (kind) {
    case CollectiveKind::kAllReduce:
      return "all_reduce_perf";
    case CollectiveKind::kAllGather:
      return "all_gather_perf";
    case CollectiveKind::kReduceScatter:
      return "reduce_scatter_perf";
    case CollectiveKind::kAllToAll:
      return "alltoall_perf";
    case CollectiveKind::kSendRecv:
      return "sendrecv_perf";
    case CollectiveKind::kBroadcast:
      return "broadcast_perf";
    case CollectiveKind::kReduce:
      return "reduce_perf";
    case CollectiveKind::kBarrier:
      return "";
  }
  return "";
}

std::optional<CollectiveKind> kind_of_program(std::string_view program) {
  const size_t slash = program.find_last_of('/');
  if (slash != std::string_view::npos) program.remove_prefix(slash + 1);
  for (const auto& [kind, name] : config::EnumNames<CollectiveKind>::kNames) {
    const std::string_view full = nccl_tests_program(kind);
    if (full.empty()) continue;
    if (program == full || program == full.substr(0, full.size() - 5)) return kind;
  }
  return std::nullopt;
}

double bus_bandwidth_factor(CollectiveKind kind, int ranks) {
  const double n = ranks;
  switch (kind) {
    case CollectiveKind::kAllReduce:
      return 2.0 * (n - 1) / n;
    case CollectiveKind::kAllGather:
    case CollectiveKind::kReduceScatter:
    case CollectiveKind::kAllToAll:
      return (n - 1) / n;
    case CollectiveKind::kSendRecv:
    case CollectiveKind::kBroadcast:
    case CollectiveKind::kReduce:
      return 1.0;
    case CollectiveKind::kBarrier:
      return 0.0;
  }
  return 0.0;
}

RankBuffers rank_buffers(CollectiveKind kind, int ranks, double bytes) {
  const double n = ranks;
  switch (kind) {
    case CollectiveKind::kAllGather:
      return {bytes / n, bytes};
    case CollectiveKind::kReduceScatter:
      return {bytes, bytes / n};
    case CollectiveKind::kBarrier:
      return {0, 0};
    default:
      return {bytes, bytes};
  }
}

}  // namespace trainsim::calibrate
