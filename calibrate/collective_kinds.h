// The nccl-tests conventions for each collective (NVIDIA/nccl-tests doc/PERFORMANCE.md): program
// names, the bus-bandwidth factor, and how the "size" of a test row relates to the buffers.
#ifndef TRAINSIM_CALIBRATE_COLLECTIVE_KINDS_H_
#define TRAINSIM_CALIBRATE_COLLECTIVE_KINDS_H_

#include <optional>
#include <string_view>
#include <vector>

#include "sim/config/types.h"

namespace trainsim::calibrate {

// The collectives the harness measures and the importer reads, in the order they are reported.
const std::vector<config::CollectiveKind>& measured_collectives();

// "all_reduce_perf", ... ; empty for kinds nccl-tests has no program for (barrier).
std::string_view nccl_tests_program(config::CollectiveKind kind);

// The kind a program name (with or without a directory and the "_perf" suffix) runs, if any.
std::optional<config::CollectiveKind> kind_of_program(std::string_view program);

// busbw / algbw over `ranks` GPUs: 2(n-1)/n for all-reduce, (n-1)/n for all-gather, reduce-scatter
// and all-to-all, 1 for send/recv, broadcast and reduce, 0 for the barrier.
double bus_bandwidth_factor(config::CollectiveKind kind, int ranks);

// Bytes of the send and receive buffer of one rank for a row of nccl-tests "size" `bytes`.
struct RankBuffers {
  double send_bytes = 0;
  double recv_bytes = 0;
};
RankBuffers rank_buffers(config::CollectiveKind kind, int ranks, double bytes);

}  // namespace trainsim::calibrate

#endif  // TRAINSIM_CALIBRATE_COLLECTIVE_KINDS_H_
