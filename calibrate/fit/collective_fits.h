// Fitted collective models for a hardware profile: per (collective, ranks, nodes), a piecewise
// alpha-beta fit of the measured (or imported) times, converted to the profile's
// latency + bytes / bus_bandwidth · factor form (config::CollectiveFit).
#ifndef TRAINSIM_CALIBRATE_FIT_COLLECTIVE_FITS_H_
#define TRAINSIM_CALIBRATE_FIT_COLLECTIVE_FITS_H_

#include <string>
#include <vector>

#include "calibrate/fit/alpha_beta.h"
#include "sim/config/hardware.h"

namespace trainsim::calibrate {

struct FittedCollective {
  config::CollectiveFit fit;
  FitQuality quality;  // over the samples of its size range
};

// Fits every (kind, ranks, nodes) group of `samples`. Samples of size 0 and groups whose bus
// factor is 0 (the barrier; all-reduce, all-gather, reduce-scatter and all-to-all over one rank,
// where nccl-tests reports busbw 0) get no fit; neither do groups with fewer than three sized
// samples. Ranges tile the measured sizes: each starts halfway (geometrically) between the last
// point of the previous range and its own first point. What was not fitted, and why, is appended
// to `notes`. Output is ordered by kind, nodes, ranks, then size.
std::vector<FittedCollective> fit_collectives(const std::vector<config::CollectiveSample>& samples,
                                              std::vector<std::string>* notes);

// The time a fit predicts for `bytes` (nccl-tests size).
double predicted_duration_s(const config::CollectiveFit& fit, double bytes);

}  // namespace trainsim::calibrate

#endif  // TRAINSIM_CALIBRATE_FIT_COLLECTIVE_FITS_H_
