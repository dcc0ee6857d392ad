// The contention-free alpha-beta prices of communication: every transfer costs latency + bytes /
// bandwidth on its own, and a collective the alpha-beta formula of a ring (all-to-all: pairwise
// exchange) at the speed of its slowest tier: intra-node links when all members share a node, the
// NICs otherwise. A ring over several nodes runs one channel through the NIC of each member on a node
// (NCCL's channels), so its bandwidth is the members per node times each GPU's NIC share, capped by
// the intra-node links; an all-to-all sends its off-node share through the GPU's own NIC share.
// What `--network ideal` plays and the closed-form estimate adds up. Ranks sit on GPUs in order,
// node-major (rank r on node r / gpus_per_node).
#ifndef TRAINSIM_SIM_COST_ALPHA_BETA_H_
#define TRAINSIM_SIM_COST_ALPHA_BETA_H_

#include <cstdint>
#include <limits>
#include <map>
#include <vector>

#include "sim/config/scenario.h"
#include "sim/workload/graph.h"

namespace trainsim::cost {

struct IdealLinks {
  double bandwidth_bytes_per_s = 100e9;  // per GPU, per direction, any peer
  double latency_s = 5e-6;               // per step
  double copy_bandwidth_bytes_per_s = 25e9;
  double copy_latency_s = 5e-6;
};

// The ideal tiers of a cluster: the intra-node links (NVLink/NVSwitch, or PCIe), and between nodes
// each GPU's share of its node's NICs (capped by the intra-node link); traffic that involves a node
// with slow NICs runs at most at that node's share.
struct IdealTiers {
  IdealLinks intra;
  IdealLinks inter;
  int64_t gpus_per_node = std::numeric_limits<int64_t>::max();
  std::map<int64_t, double> slow_inter_node;  // node -> its per-GPU bandwidth between nodes

  // The tier that connects every rank of `ranks` (ranks on GPUs in order, node-major).
  IdealLinks connecting(const std::vector<int64_t>& ranks) const;
};

// What a collective over one group runs on: the group's tier (IdealTiers::connecting), the
// intra-node links, the members on the node holding the fewest of them and the nodes it spans.
struct GroupLinks {
  IdealLinks links;
  IdealLinks intra;
  int64_t per_node = 1;
  int64_t nodes = 1;  // the nodes the group spans
};

// The tiers of `scenario`'s topology, host link and slow NICs (its stragglers), the bandwidths scaled by
// its hardware profile's stack collective fractions (config/stack.h).
IdealTiers ideal_tiers(const config::Scenario& scenario);

// The group of `members` on `tiers`.
GroupLinks group_links(const IdealTiers& tiers, const std::vector<int64_t>& members);

// Time of one collective of `kind` over `ranks` GPUs with nccl-tests size `bytes` on `links`:
//   all-reduce      2(n-1)/n S/B + 2(n-1) a     all-gather, reduce-scatter  (n-1)/n S/B + (n-1) a
//   all-to-all      (n-1)/n S/B + (n-1) a       barrier                      2(n-1) a
double collective_s(workload::CollectiveKind kind, int64_t ranks, double bytes, const IdealLinks& links);
// The same over a group spanning k nodes with m members on the fewest-populated node: rings at
// B = min(intra, m x the NIC share) under the NCCL protocol that is fastest for them (its base
// latency; per step, the longer of the link's and the protocol's latency, through the network on the
// lap's k edges between nodes and over NVLink on the others; its share of B: nccl_protocol.h). An
// all-reduce or barrier takes NCCL's tree instead where NCCL's tuner picks it
// (nccl_all_reduce_uses_tree): chains in the nodes and a double binary tree of depth ceil(log2 k)
// between them, 2S/m through each NIC (S/m between two nodes), under its own fastest protocol. An all-to-all:
// (m-1)/n S within the node and (n-m)/n S through the NIC share, whichever takes longer.
double collective_s(workload::CollectiveKind kind, int64_t ranks, double bytes, const GroupLinks& group);
// One message of `bytes` from rank `src` to rank `dst`.
double send_s(const IdealTiers& tiers, int64_t src, int64_t dst, double bytes);
// One copy of `bytes` between a GPU and pinned host memory of its node.
double copy_s(const IdealTiers& tiers, double bytes);

}  // namespace trainsim::cost

#endif  // TRAINSIM_SIM_COST_ALPHA_BETA_H_
