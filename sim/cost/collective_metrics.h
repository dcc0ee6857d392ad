// The byte accounting of nccl-tests (doc/PERFORMANCE.md and src/*.cu), so simulated collectives
// print and compare like measured ones: which size and element count a row shows, and the factor
// from algorithm bandwidth (size / time) to bus bandwidth.
#ifndef TRAINSIM_SIM_COST_COLLECTIVE_METRICS_H_
#define TRAINSIM_SIM_COST_COLLECTIVE_METRICS_H_

#include <cstdint>
#include <string>

#include "sim/cost/collective_model.h"

namespace trainsim::cost {

struct NcclTestsCounts {
  uint64_t size_bytes = 0;  // the "size" column: max(send, receive) buffer per rank
  uint64_t count = 0;       // the "count" column: elements passed to the NCCL call
};

// What nccl-tests runs for a requested size of `requested_bytes` with `type_bytes`-byte elements
// over `ranks` ranks: all-gather, reduce-scatter and all-to-all round the per-rank count down to a
// multiple of the ranks. Barrier (not in nccl-tests) has size and count 0.
NcclTestsCounts nccl_tests_counts(CollectiveKind kind, uint64_t requested_bytes, int type_bytes, int ranks);

// busbw = algbw x factor: 2(n-1)/n for all-reduce, (n-1)/n for all-gather, reduce-scatter and
// all-to-all, 1 for broadcast, reduce and send/recv (0 for barrier, which moves nothing).
double bus_bandwidth_factor(CollectiveKind kind, int ranks);

// The nccl-tests binary for `kind`: its name followed by "_perf" ("all_reduce_perf"); barrier
// has none and is named "barrier".
std::string nccl_tests_name(CollectiveKind kind);

}  // namespace trainsim::cost

#endif  // TRAINSIM_SIM_COST_COLLECTIVE_METRICS_H_
