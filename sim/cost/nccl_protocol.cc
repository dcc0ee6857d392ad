#include "sim/cost/nccl_protocol.h"

#include <cmath>
#include <cstdlib>
#include <limits>

namespace trainsim::cost {

std::string_view to_string(Protocol protocol) {
  switch (protocol) {
    case Protocol::kLl:
      return "LL";
    case Protocol::kLl128:
      return "LL128";
    case Protocol::kSimple:
      return "Simple";
  }
  return "?";
}

std::array<ProtocolCost, 3> protocol_costs(Algorithm algorithm) {
  constexpr double kUs = 1e-6;
  // NCCL's baseLat (per collective), hwLat over NVLink and over the network (per step), in us, and
  // the bandwidth refinements of ncclTopoTuneModel. Over NVLink, LL's step latency is multiplied by
  // 1.8 when the communicator spans nodes.
  switch (algorithm) {
    case Algorithm::kRing:
      return {{
          {Protocol::kLl, 6.6 * kUs, 0.6 * 1.8 * kUs, 2.7 * kUs, 0.5},
          {Protocol::kLl128, 14.0 * kUs, 1.9 * kUs, 4.0 * kUs, 0.92},
          {Protocol::kSimple, 8.4 * kUs, 3.4 * kUs, 14.0 * kUs, 1.0},
      }};
    case Algorithm::kTree:
      // The tree's all-reduce bandwidth is 0.92 of the links', LL's 1/3.8 and LL128's 120/128 of that.
      return {{
          {Protocol::kLl, 6.8 * kUs, 0.6 * 1.8 * kUs, 5.0 * kUs, 0.92 / 3.8},
          {Protocol::kLl128, 14.0 * kUs, 1.25 * kUs, 8.5 * kUs, 0.92 * 120.0 / 128.0},
          {Protocol::kSimple, 8.4 * kUs, 4.0 * kUs, 14.0 * kUs, 0.92},
      }};
    default:
      std::abort();  // only rings and trees run NCCL's protocols in this model
  }
}

namespace {

// NCCL's treeCorrectionFactor (tuning.cc): a tree's bandwidth at sizes 64 B x 2^i, LL, LL128, Simple.
constexpr std::array<std::array<double, 23>, 3> kTreeCorrection = {{
    {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0},
    {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0, 1.0},
    {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9},
}};

double tree_correction(Protocol protocol, double bytes) {
  const double chunks = std::floor(bytes / 64);
  const int index = chunks < 1 ? 0 : static_cast<int>(std::floor(std::log2(chunks)));
  return index < 23 ? kTreeCorrection[static_cast<size_t>(protocol)][static_cast<size_t>(index)] : 1.0;
}

}  // namespace

bool nccl_all_reduce_uses_tree(double bytes, int ranks, int nodes, double intra_bytes_per_s,
                               double inter_node_bytes_per_s) {
  const double n = ranks;
  const double bus = nodes <= 2 ? intra_bytes_per_s : inter_node_bytes_per_s;
  const double per_node = n / nodes;
  const int inter_steps = 2 * nodes;
  const double depth = std::floor(std::log2(static_cast<double>(nodes)));
  double ring_s = std::numeric_limits<double>::infinity();
  for (const ProtocolCost& p : protocol_costs(Algorithm::kRing)) {
    double latency_s =
        p.base_latency_s + (2 * (n - 1) - inter_steps) * p.intra_step_s + inter_steps * p.inter_step_s;
    // The ring's plateau under Simple across nodes (x1.4 from Ampere on), once each rank's share of a
    // channel reaches 64 bytes; NCCL's channel count taken as the GPUs per node.
    if (p.protocol == Protocol::kSimple && bytes >= 64 * n * per_node) latency_s *= 1.4;
    ring_s = std::min(ring_s, latency_s + bytes / (bus * p.bandwidth_factor * n / (2 * (n - 1))));
  }
  double tree_s = std::numeric_limits<double>::infinity();
  for (const ProtocolCost& p : protocol_costs(Algorithm::kTree)) {
    const double latency_s =
        p.base_latency_s + 2 * ((per_node - 1) * p.intra_step_s + depth * p.inter_step_s);
    tree_s = std::min(
        tree_s, latency_s + bytes / (bus * p.bandwidth_factor * 0.5 * tree_correction(p.protocol, bytes)));
  }
  return tree_s < ring_s;
}

}  // namespace trainsim::cost
