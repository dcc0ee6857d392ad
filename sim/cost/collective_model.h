// What the collective planner knows: which node each GPU is on, the NVLink and NIC bandwidth a GPU
// has, the latency between two GPUs, whether the NVSwitch reduces in-network (NVLS), and a tuning
// table that corrects the ideal model per (collective, algorithm).
//
// Tuning defaults to ideal values derived from the topology: efficiency 1 and no extra latency,
// so a phase costs its path latencies plus bytes over link bandwidth. Calibration (measured on a
// node or imported from nccl-tests) fills it. Corrections are applied by the planner, not by
// SimGrid factor callbacks: latencies are added to the phase, and a bandwidth efficiency e < 1
// divides the bytes of every flow, so the flow occupies the wire 1/e as long and contends for it
// accordingly (protocol overhead such as NCCL LL's flag words does use the wire). The efficiency
// curve is indexed by the collective's size, so it also absorbs NCCL's protocol choice as
// nccl-tests measured it.
#ifndef TRAINSIM_SIM_COST_COLLECTIVE_MODEL_H_
#define TRAINSIM_SIM_COST_COLLECTIVE_MODEL_H_

#include <array>
#include <functional>
#include <map>
#include <optional>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "sim/config/types.h"

namespace trainsim::platform {
class TopologyGraph;
}

namespace trainsim::cost {

// The collectives of the hardware-profile schema (spelt as nccl-tests names them: "all_reduce").
using config::CollectiveKind;

enum class Algorithm { kAuto, kRing, kTree, kHierarchical, kNvls, kPairwise, kDirect };

// Spellings on the command line ("auto", "ring", ...), in declaration order.
std::string_view to_string(Algorithm algorithm);
std::optional<Algorithm> parse_algorithm(std::string_view text);
std::vector<std::string_view> algorithm_names();

struct TopologyView {
  int gpu_count = 0;
  int gpus_per_node = 1;
  bool nvls = false;            // the NVSwitch of a node reduces in-network
  bool intra_switched = false;  // every GPU of a node has its own port into a non-blocking NVSwitch
  // Per GPU and direction: into the node's NVLink domain, and out of the node through its share of
  // the NICs (0 without a fabric).
  double intra_bandwidth_bytes_per_s = 0;
  double inter_bandwidth_bytes_per_s = 0;
  // Latency of the path between two GPUs, seconds.
  std::function<double(int src_gpu, int dst_gpu)> path_latency_s;

  int node_of(int gpu) const { return gpu / gpus_per_node; }
};

// The view of `graph` (which must outlive the view: path_latency_s routes through it).
TopologyView view_of(const platform::TopologyGraph& graph);

struct EfficiencyPoint {
  double bytes = 0;
  double efficiency = 1;
};

struct AlgorithmTuning {
  double base_latency_s = 0;  // once per collective (launch, synchronisation)
  double step_latency_s = 0;  // per algorithm step, on top of the path latency
  // Achieved / ideal bandwidth against the collective's size; sorted by bytes, all positive.
  // Interpolated linearly in log(bytes), constant beyond both ends; empty means 1.
  std::vector<EfficiencyPoint> efficiency;

  // Aborts when the points are not sorted or not positive (tuning is built by code).
  double efficiency_at(double bytes) const;
};

// Collectives inside one node (NVLink) and across nodes (NICs, fabric) are tuned separately: they
// run different NCCL algorithms and protocols at different efficiencies.
enum class Tier { kIntraNode, kInterNode };

struct CollectiveTuning {
  std::map<std::tuple<CollectiveKind, Algorithm, Tier>, AlgorithmTuning> entries;
  // The software stack's bandwidth fraction on each tier (a stack profile's collective fractions,
  // config/stack.h): multiplies every efficiency of the tier, point-to-point transfers included.
  std::array<double, 2> tier_fraction{1.0, 1.0};
  // Whether rings and trees across nodes without an entry run under NCCL's protocols
  // (sim/cost/nccl_protocol.h). Off only for the bare reference that calibration divides
  // measurements by, so that an entry holds everything the measurement adds to the bare algorithm.
  bool nccl_protocols = true;

  double fraction(Tier tier) const { return tier_fraction[static_cast<size_t>(tier)]; }

  // The entry for (kind, algorithm, tier), or the ideal one.
  const AlgorithmTuning& of(CollectiveKind kind, Algorithm algorithm, Tier tier) const;
  // Whether (kind, algorithm, tier) has an entry (measured or imported), not the ideal one.
  bool calibrated(CollectiveKind kind, Algorithm algorithm, Tier tier) const {
    return entries.contains({kind, algorithm, tier});
  }
};

struct CollectiveModel {
  TopologyView topology;
  CollectiveTuning tuning;
};

}  // namespace trainsim::cost

#endif  // TRAINSIM_SIM_COST_COLLECTIVE_MODEL_H_
