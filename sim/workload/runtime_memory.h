// Device memory the software stack holds for a rank beside its tensors (memory category "runtime"):
// the CUDA context, and NCCL's buffers for the communicators and peers the rank's graph uses.
// Frameworks create one NCCL communicator per process group (group kind here), and NCCL allocates a
// communicator's buffers when an operation first needs them, so a group costs only once used:
//   - a group that runs all-reduce, all-gather, reduce-scatter or barrier: one communicator's ring
//     and tree buffers, whatever the group size (a ring or tree channel connects two neighbours);
//   - a group that runs all-to-all: point-to-point buffers for every other member;
//   - sends and receives: point-to-point buffers for each distinct peer.
// A peer shares the rank's node when rank / gpus_per_node agrees (ranks sit on GPUs node-major).
#ifndef TRAINSIM_SIM_WORKLOAD_RUNTIME_MEMORY_H_
#define TRAINSIM_SIM_WORKLOAD_RUNTIME_MEMORY_H_

#include <cstdint>

#include "sim/common/warnings.h"
#include "sim/config/hardware.h"
#include "sim/workload/graph.h"
#include "sim/workload/plan.h"

namespace trainsim::workload {

// What a rank's graph connects.
struct CommunicatorUse {
  int64_t collective_communicators = 0;  // groups running ring/tree collectives
  int64_t p2p_peers_in_node = 0;         // (group or send/receive, peer) connections within the node
  int64_t p2p_peers_across_nodes = 0;    // the same across nodes
};

// Counts the connections of `graph` (the graph of rank graph.info.rank under `plan`). gpus_per_node
// < 1 puts every rank on one node. O(ops + connections · log connections).
CommunicatorUse communicator_use(const Graph& graph, const ParallelPlan& plan, int64_t gpus_per_node);

// Bytes of `use` under the profile's `runtime` figures, the context included.
double runtime_memory_bytes(const CommunicatorUse& use, const config::RuntimeMemory& runtime);

// Records in `warnings` that nothing is counted when `profile` gives no runtime_memory.
void warn_without_runtime_memory(const config::HardwareProfile& profile, WarningLog& warnings);

}  // namespace trainsim::workload

#endif  // TRAINSIM_SIM_WORKLOAD_RUNTIME_MEMORY_H_
