// A contention-free transport: every transfer costs latency + bytes / bandwidth on its own, and a
// collective costs the alpha-beta formula of a ring (all-to-all: pairwise exchange) at the speed of
// its slowest tier: intra-node links when all members share a node, the NICs otherwise. Used for
// fast screening (`--network ideal`) and to test the engine's scheduling logic in isolation from the
// network model. Ranks sit on GPUs in order, node-major (rank r on node r / gpus_per_node).
#ifndef TRAINSIM_SIM_ENGINE_IDEAL_TRANSPORT_H_
#define TRAINSIM_SIM_ENGINE_IDEAL_TRANSPORT_H_

#include <limits>
#include <map>
#include <vector>

#include "sim/config/scenario.h"
#include "sim/engine/transport.h"

namespace trainsim::engine {

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

// The tiers of `scenario`'s topology, host link and slow NICs (its stragglers).
IdealTiers ideal_tiers(const config::Scenario& scenario);

class IdealTransport : public Transport {
 public:
  // One tier for everything.
  explicit IdealTransport(IdealLinks links) : tiers_{links, links, std::numeric_limits<int64_t>::max(), {}} {}
  explicit IdealTransport(IdealTiers tiers) : tiers_(std::move(tiers)) {}

  // Time of one collective of `kind` over `ranks` GPUs with nccl-tests size `bytes` on `links`:
  //   all-reduce      2(n-1)/n S/B + 2(n-1) a     all-gather, reduce-scatter  (n-1)/n S/B + (n-1) a
  //   all-to-all      (n-1)/n S/B + (n-1) a       barrier                      2(n-1) a
  static double collective_s(workload::CollectiveKind kind, int64_t ranks, double bytes,
                             const IdealLinks& links);

  void build_platform() override;
  simgrid::s4u::Host* host_of(int64_t rank) override;
  void collective(workload::CollectiveKind kind, const std::vector<int64_t>& members, double bytes) override;
  void send(int64_t src, int64_t dst, double bytes) override;
  void copy(int64_t rank, workload::CopyDirection direction, double bytes) override;

 private:
  IdealTiers tiers_;
  simgrid::s4u::Host* host_ = nullptr;
};

}  // namespace trainsim::engine

#endif  // TRAINSIM_SIM_ENGINE_IDEAL_TRANSPORT_H_
