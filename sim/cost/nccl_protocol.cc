#include "sim/cost/nccl_protocol.h"

#include <cstdlib>

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

}  // namespace trainsim::cost
