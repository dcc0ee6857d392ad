#include "sim/cost/collective_metrics.h"

namespace trainsim::cost {

NcclTestsCounts nccl_tests_counts(CollectiveKind kind, uint64_t requested_bytes, int type_bytes, int ranks) {
  const uint64_t word = static_cast<uint64_t>(type_bytes);
  const uint64_t n = static_cast<uint64_t>(ranks);
  const uint64_t count = requested_bytes / word;
  switch (kind) {
    case CollectiveKind::kAllGather:
    case CollectiveKind::kReduceScatter:
    case CollectiveKind::kAllToAll:
      return {count / n * n * word, count / n};
    case CollectiveKind::kBarrier:
      return {0, 0};
    default:
      return {count * word, count};
  }
}

double bus_bandwidth_factor(CollectiveKind kind, int ranks) {
  const double n = ranks;
  switch (kind) {
    case CollectiveKind::kAllReduce:
      return 2 * (n - 1) / n;
    case CollectiveKind::kAllGather:
    case CollectiveKind::kReduceScatter:
    case CollectiveKind::kAllToAll:
      return (n - 1) / n;
    case CollectiveKind::kBroadcast:
    case CollectiveKind::kReduce:
    case CollectiveKind::kSendRecv:
      return 1;
    case CollectiveKind::kBarrier:
      return 0;
  }
  return 0;
}

std::string nccl_tests_name(CollectiveKind kind) {
  if (kind == CollectiveKind::kBarrier) return "barrier";
  return std::string(config::to_string(kind)) + "_perf";
}

}  // namespace trainsim::cost
