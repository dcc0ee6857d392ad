#include "sim/analytic/bubble.h"

#include <algorithm>

namespace trainsim::analytic {

double pipeline_bubble_fraction(config::Schedule schedule, int64_t pp, int64_t micro_batches, int64_t vpp,
                                double weight_grad_share) {
  if (pp <= 1 || micro_batches <= 0) return 0;
  const double bubble = static_cast<double>(pp - 1) / static_cast<double>(micro_batches);
  const double v = static_cast<double>(vpp);
  switch (schedule) {
    case config::Schedule::kInterleaved:
      return bubble / v;
    case config::Schedule::kZeroBubble: {
      const double filled =
          static_cast<double>(std::min(micro_batches - 1, pp - 1)) / static_cast<double>(pp - 1);
      return bubble * (1 - weight_grad_share * (1 + filled)) / v;
    }
    default:
      return bubble;
  }
}

}  // namespace trainsim::analytic
