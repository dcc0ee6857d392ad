#include "sim/engine/transport.h"

namespace trainsim::engine {

std::vector<bool> Transport::coupled(const std::vector<Traffic>& /*anchors*/,
                                     const std::vector<Traffic>& candidates) {
  return std::vector<bool>(candidates.size(), false);
}

void Transport::sends(const std::vector<std::pair<int64_t, int64_t>>& /*pairs*/, double /*bytes*/) {}

void Transport::copies(const std::vector<int64_t>& /*gpus*/, workload::CopyDirection /*direction*/,
                       double /*bytes*/) {}

}  // namespace trainsim::engine
