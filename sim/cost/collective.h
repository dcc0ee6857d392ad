// Collectives as algorithms (decision 4 of docs/DESIGN.md), coarsened (decision 3): a collective is a
// short sequence of phases, each a set of concurrent flows (one per algorithm edge, the bytes that
// edge carries over the whole phase) plus the phase's latency term. A ring all-reduce over N GPUs
// is one phase of N flows of 2(N-1)/N x S bytes with latency 2(N-1) x alpha, not 2(N-1) rounds.
// The flow runner (sim/cost/flow_runner.h) plays a schedule on the SimGrid platform, where the
// flows share links by max-min fairness.
//
// Sizes follow nccl-tests: `bytes` is the all-reduce/broadcast/reduce buffer, the all-gather
// output, the reduce-scatter input, the all-to-all send buffer and the send/recv message, per GPU.
//
// Latency: a phase waits `latency_s` = steps x per-step latency (+ the tuning's per-step and base
// latencies). Rings use the mean path latency of their edges (a chunk crosses them one after the
// other, so 2(N-1) steps of an all-reduce cost about two laps); the other algorithms use the
// longest path they wait for.
//
// Algorithms (members are grouped by node in order of first appearance; C "channels" = the most
// members on one node when the group spans nodes, so each channel leaves a node through another
// GPU and NIC, as NCCL's rings do):
//   ring          C rings, each ordering every node's members rotated by the channel number;
//                 all-reduce 2(N-1)/N S per edge, all-gather/reduce-scatter (N-1)/N S, broadcast
//                 and reduce a pipelined chain from/to the root (S per edge); bytes split over C.
//   tree          NCCL's double binary tree across nodes (two trees, S/2 each, up and down at
//                 once) with a chain inside each node; all-reduce only; C channels.
//   hierarchical  reduce-scatter inside each node (NVLink ring), ring all-reduce of S/g between
//                 the nodes on each local rank, all-gather inside each node; also all-gather and
//                 reduce-scatter (two phases); needs the same number g of members on every node.
//   nvls          NVLink SHARP in the NVSwitch: every GPU sends and receives S(N+1)/N once;
//                 all-reduce inside one node whose topology has `intra.nvls`.
//   pairwise      all-to-all: every ordered pair exchanges S/N, all at once; N-1 steps of the mean
//                 path latency. Across nodes the pairs are coarsened to one flow per source GPU and
//                 destination node (to its member of the same local position, with what the source
//                 sends that node), so an all-to-all over k nodes of g GPUs is k g (g - 1 + k - 1)
//                 flows, not k g (k g - 1), with the same bytes through every NIC.
//   direct        send/recv: member i sends S to member i+1 (cyclic, as nccl-tests sendrecv).
// Barrier is the latency of the all-reduce the auto rule picks for 0 bytes, without flows.
//
// Protocols: a ring or tree across nodes whose tuning is not calibrated runs under the NCCL protocol
// (LL, LL128, Simple) that gives it the smallest estimated time, with that protocol's base latency,
// step latencies and bandwidth share (sim/cost/nccl_protocol.h).
//
// Auto choice, like NCCL's tuner: an all-reduce across nodes runs as the tree or the ring that
// NCCL's own model picks (nccl_all_reduce_uses_tree, from the links' nominal rates; not whichever of
// the two this model would run faster); one node's all-reduce as the ring or, inside an NVLS node,
// nvls, whichever has the smallest estimated time, where the estimate of a phase is its latency
// plus the bytes that the busiest GPU sends or receives over NVLink or over its NICs divided by that
// bandwidth; the other collectives their only algorithm. In practice: nvls inside an NVLS node;
// across nodes, tree for small all-reduces and ring for large ones, the crossover growing with the
// node count (the ring's latency grows linearly, the tree's logarithmically), at two nodes a ring
// from a few MiB on. `hierarchical` is only used when asked for.
#ifndef TRAINSIM_SIM_COST_COLLECTIVE_H_
#define TRAINSIM_SIM_COST_COLLECTIVE_H_

#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "sim/cost/collective_model.h"
#include "sim/cost/nccl_protocol.h"

namespace trainsim::cost {

// A collective request that cannot be planned: an algorithm that does not implement the kind or
// does not fit the group, an empty or repeated member list, a negative size.
class CollectiveError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

struct Flow {
  int src_gpu = 0;
  int dst_gpu = 0;
  double bytes = 0;  // already divided by the tuning's bandwidth efficiency
};

struct Phase {
  std::vector<Flow> flows;  // concurrent; at most one per (src, dst), never src == dst
  double latency_s = 0;     // before the flows start
};

struct CollectiveSchedule {
  CollectiveKind kind = CollectiveKind::kAllReduce;
  Algorithm algorithm = Algorithm::kRing;
  std::vector<int> members;   // global GPU ids, as given
  double bytes = 0;           // the requested size (nccl-tests convention)
  std::vector<Phase> phases;  // in sequence
  // NCCL's protocol, where the planner chose one (rings and trees across nodes without a calibrated
  // tuning entry, sim/cost/nccl_protocol.h); elsewhere calibration holds what NCCL chose.
  std::optional<Protocol> protocol;
};

// Plans collective `kind` of `bytes` over `members` (global GPU ids, at least one, no repeats)
// with `algorithm` (kAuto: the rule above). `root` indexes `members` for broadcast and reduce.
// Throws CollectiveError for requests that cannot be planned. Costs O(flows x route length).
CollectiveSchedule plan_collective(CollectiveKind kind, const std::vector<int>& members, double bytes,
                                   const CollectiveModel& model, Algorithm algorithm = Algorithm::kAuto,
                                   int root = 0);

// One transfer of `bytes` from `src_gpu` to `dst_gpu` (a pipeline send): one phase, one flow, the
// path latency plus the send/recv tuning. Throws CollectiveError when src == dst.
CollectiveSchedule plan_point_to_point(int src_gpu, int dst_gpu, double bytes, const CollectiveModel& model);

// The estimate the auto rule compares (see above), seconds.
double estimate_duration_s(const CollectiveSchedule& schedule, const CollectiveModel& model);

}  // namespace trainsim::cost

#endif  // TRAINSIM_SIM_COST_COLLECTIVE_H_
