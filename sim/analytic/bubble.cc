#include "sim/analytic/bubble.h"

namespace trainsim::analytic {

double pipeline_bubble_fraction(config::Schedule schedule, int64_t pp, int64_t micro_batches, int64_t vpp) {
  if (pp <= 1 || micro_batches <= 0) return 0;
  const double bubble = static_cast<double>(pp - 1) / static_cast<double>(micro_batches);
  return schedule == config::Schedule::kInterleaved ? bubble / static_cast<double>(vpp) : bubble;
}

}  // namespace trainsim::analytic
