// NCCL's protocols and what each costs a ring or tree collective whose members span nodes, as NCCL's
// own tuning model prices them (NVIDIA/nccl src/graph/tuning.cc, the default tuner constants of NCCL
// 2.19 to 2.28: baseLat, hwLat and the protocol refinements of ncclTopoTuneModel). NCCL picks, per
// call, the protocol its model finds fastest: LL (8-byte stores carrying 4 bytes of payload and a
// flag: lowest latency, half the bandwidth), LL128 (120 of every 128 bytes payload) or Simple (the
// full bandwidth, but a chunk waits for a fence and a flag at every step). NCCL's step latencies are
// whole steps as measured on typical machines, hop included, so a step costs the longer of its path's
// latency and the protocol's: through the network 14 us with Simple (the proxy's post and completion)
// against a switch hop of well under a microsecond, so a ring's latency over N nodes grows as
// 2(N-1) x 14 us.
//
// Only collectives across nodes without a calibrated tuning entry get these costs: one node's
// collectives are measured by calibration (or taken from the hardware profile's fits), which already
// contain the protocol NCCL chose there. All-to-alls and point-to-point messages, which NCCL runs as
// send/receive pairs outside this model, keep the path latency alone.
#ifndef TRAINSIM_SIM_COST_NCCL_PROTOCOL_H_
#define TRAINSIM_SIM_COST_NCCL_PROTOCOL_H_

#include <array>
#include <string_view>

#include "sim/cost/collective_model.h"

namespace trainsim::cost {

enum class Protocol { kLl, kLl128, kSimple };

// Spelling in reports ("LL", "LL128", "Simple").
std::string_view to_string(Protocol protocol);

struct ProtocolCost {
  Protocol protocol = Protocol::kSimple;
  double base_latency_s = 0;    // once per collective
  double intra_step_s = 0;      // per algorithm step between two GPUs of one node (NVLink)
  double inter_step_s = 0;      // per algorithm step through the network
  double bandwidth_factor = 1;  // the payload's share of the bandwidth the algorithm gets
};

// The three protocols' costs for `algorithm` (ring or tree; aborts otherwise) in a collective whose
// members span nodes. NCCL's caps on LL and LL128 bandwidth per channel are left out: they bind only
// at sizes where Simple is chosen anyway.
std::array<ProtocolCost, 3> protocol_costs(Algorithm algorithm);

// Whether NCCL's tuner runs an all-reduce of `bytes` over `ranks` GPUs on `nodes` nodes as a tree
// rather than a ring: the algorithm and protocol its own model (ncclTopoTuneModel and
// ncclTopoGetAlgoTime) finds fastest, NCCL's choice whatever the algorithms really take. Its bus
// bandwidth is the NVLink's per GPU (`intra_bytes_per_s`) up to two nodes and the node's NICs
// (`inter_node_bytes_per_s`) beyond; a ring's algorithm bandwidth is n/(2(n-1)) of it, a tree's half
// of 0.92 of it, further lowered at medium sizes by NCCL's tree correction factors. So at two nodes,
// where a tree would cross the network with half a ring's bytes, NCCL still runs large all-reduces as
// rings. Requires nodes > 1.
bool nccl_all_reduce_uses_tree(double bytes, int ranks, int nodes, double intra_bytes_per_s,
                               double inter_node_bytes_per_s);

}  // namespace trainsim::cost

#endif  // TRAINSIM_SIM_COST_NCCL_PROTOCOL_H_
