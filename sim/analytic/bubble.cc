#include "sim/analytic/bubble.h"

#include <algorithm>

namespace trainsim::analytic {

double pipeline_bubble_fraction(config::Schedule schedule, int64_t pp, int64_t micro_batches, int64_t vpp,
                                PassShares shares) {
  if (pp <= 1 || micro_batches <= 0) return 0;
  const double bubble = static_cast<double>(pp - 1) / static_cast<double>(micro_batches);
  const auto v = static_cast<double>(vpp);
  switch (schedule) {
    case config::Schedule::kInterleaved:
      return bubble / v;
    case config::Schedule::kZeroBubble: {
      const double filled =
          static_cast<double>(std::min(micro_batches - 1, pp - 1)) / static_cast<double>(pp - 1);
      return bubble * (1 - shares.weight_grad * (1 + filled)) / v;
    }
    case config::Schedule::kZbV: {
      const double f = shares.forward;
      const double w = shares.weight_grad;
      const double b = 1 - f - w;
      const double full = std::max(0.0, std::max(f, b) - w);                // m >= 2p - 1
      const double single = f + b - w / (2 * static_cast<double>(pp - 1));  // m = 1
      const double filled =
          static_cast<double>(std::min(micro_batches - 1, 2 * pp - 2)) / static_cast<double>(2 * pp - 2);
      return bubble * (single + (full - single) * filled);
    }
    case config::Schedule::kDualPipeV:
      return bubble * (shares.forward + 2 * (1 - shares.forward - shares.weight_grad) - shares.weight_grad) /
             2;
    default:
      return bubble;
  }
}

}  // namespace trainsim::analytic
