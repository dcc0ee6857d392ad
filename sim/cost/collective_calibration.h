// From measured collective fits (a hardware profile's `collective_fits`, from `trainsim calibrate`
// or imported nccl-tests logs) to the planner's tuning: for each fit the group it was measured on is
// planned with the ideal model, and the tuning of each algorithm it calibrates gets the latency the
// model lacks (measured latency - modelled latency) and, at each measured size of the fit's range
// (the profile's collective_samples), the bandwidth efficiency that stretches the modelled transfer
// time to the measured one. A plan of the same group then reproduces the measurements; other groups
// using that algorithm inherit its efficiency curve. A fit timed with one algorithm (its
// `algorithm`) calibrates that algorithm only; a fit of NCCL's own choice every algorithm without one.
#ifndef TRAINSIM_SIM_COST_COLLECTIVE_CALIBRATION_H_
#define TRAINSIM_SIM_COST_COLLECTIVE_CALIBRATION_H_

#include <set>
#include <tuple>

#include "sim/config/hardware.h"
#include "sim/cost/collective_model.h"

namespace trainsim::cost {

struct CalibratedTuning {
  using Key = std::tuple<CollectiveKind, Algorithm, Tier>;
  CollectiveTuning tuning;
  int fits_used = 0;     // fits that became tuning points
  int fits_skipped = 0;  // fits whose group does not fit the topology (more ranks or nodes than it has)
  // The entries calibrated by tables timed with their own algorithm (NCCL_ALGO); the other entries
  // of `tuning` carry NCCL's own choice.
  std::set<Key> own_tables;
};

// The tuning `profile`'s fits imply on `topology`, with its stack's collective fractions (config/stack.h)
// on each tier. With no fits and no stack: the ideal tuning.
CalibratedTuning tuning_from_fits(const config::HardwareProfile& profile, const TopologyView& topology);

}  // namespace trainsim::cost

#endif  // TRAINSIM_SIM_COST_COLLECTIVE_CALIBRATION_H_
