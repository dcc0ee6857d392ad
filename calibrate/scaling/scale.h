// Deriving a profile for a GPU you do not have from one you measured (calibrate/README.md,
// "Profiles for hardware you don't own"). The target's cited profile supplies what datasheets say
// (peaks, HBM, host link); the measured profile supplies how close real kernels get to them:
//   - GEMM and attention samples keep their measured fraction of peak: time x (measured peak /
//     target peak) of their dtype (dtypes the target has no peak for are dropped);
//   - the compute efficiencies, launch and sync overheads and the compute slowdown are copied;
//   - host copies keep their latency, the rest of their time scales by the host-link bandwidth ratio
//     of their direction;
//   - collectives, only when the fabrics are named (network parts): the bus bandwidth of every fit
//     of the tier (one node: intra_node; several: inter_node) scales by to / from bandwidth, latency
//     kept; samples move with their fit. Without them the collective tables are left out.
// Every derived number is sourced "derived: ..." with both files named.
#ifndef TRAINSIM_CALIBRATE_SCALING_SCALE_H_
#define TRAINSIM_CALIBRATE_SCALING_SCALE_H_

#include <optional>
#include <string>

#include "calibrate/profile/document.h"
#include "calibrate/scaling/network_part.h"
#include "sim/config/hardware.h"

namespace trainsim::calibrate {

struct ScaleOptions {
  std::string name;            // of the new profile; empty: "<target name>-derived"
  std::string measured_label;  // file names, for sources
  std::string target_label;
  std::optional<NetworkPart> from_network;  // the fabric the measured collectives ran on
  std::optional<NetworkPart> to_network;    // the target's
  std::string date;
  std::string tool_version;
  std::string command;
};

// Throws std::invalid_argument when `measured` is not a measured profile (provenance kind), when the
// network parts are given alone or for different tiers, or when no table survives.
ProfileDocument scale_profile(const config::HardwareProfile& measured, const config::HardwareProfile& target,
                              const ScaleOptions& options);

}  // namespace trainsim::calibrate

#endif  // TRAINSIM_CALIBRATE_SCALING_SCALE_H_
