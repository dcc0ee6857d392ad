// The communication log of one rank's graph, in the form of the DeepSpeed comms logger that
// Anthony et al. 2024 analyse (seed-papers.md B3): per operation kind, group and message size, the
// number of calls and the bytes. Together the entries are the message-size histogram.
//
// Message size m is Op::bytes (graph.h: all-gather output, reduce-scatter input, the all-to-all
// buffer, the send). Two volumes per rank are derived from it:
//   volume_bytes  the seed paper's view: all-reduce 2m, all-gather m, reduce-scatter m,
//                 all-to-all m, barrier (a 1-element all-reduce) 2m, send m, receive 0
//   wire_bytes    what a ring (pairwise for all-to-all) implementation sends on n ranks:
//                 all-reduce 2m(n-1)/n, all-gather, reduce-scatter and all-to-all m(n-1)/n,
//                 barrier 2m(n-1)/n, send m, receive 0
#ifndef TRAINSIM_SIM_WORKLOAD_COMM_LOG_H_
#define TRAINSIM_SIM_WORKLOAD_COMM_LOG_H_

#include <cstdint>
#include <string_view>
#include <vector>

#include "sim/workload/graph.h"
#include "sim/workload/plan.h"

namespace trainsim::workload {

enum class CommKind : uint8_t { kAllReduce, kAllGather, kReduceScatter, kAllToAll, kBarrier, kSend, kRecv };

struct CommLogEntry {
  CommKind kind;
  GroupKind group;  // for send/recv: the axis the peer differs on (pp, sp, ...)
  int64_t group_size = 0;
  int64_t calls = 0;
  double bytes_per_call = 0;
  double total_bytes = 0;   // calls x bytes_per_call
  double volume_bytes = 0;  // see above
  double wire_bytes = 0;
};

// Sorted by kind, group, then message size.
std::vector<CommLogEntry> comm_log(const ParallelPlan& plan, const Graph& graph);

std::string_view to_string(CommKind kind);
// Per-call volume factors of the paper view and of a ring on n ranks (see above).
double volume_factor(CommKind kind);
double wire_factor(CommKind kind, int64_t n);

}  // namespace trainsim::workload

#endif  // TRAINSIM_SIM_WORKLOAD_COMM_LOG_H_
