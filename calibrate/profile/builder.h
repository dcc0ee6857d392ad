// From measurements to a hardware profile: the measured tables (medians with the min, p90 and count
// of their repetitions, 4 significant digits), the fitted collective models, the compute efficiencies
// derived from them, and a source for every number: "measured: ..." for what the run timed,
// "queried: ..." for what the system reports, and the base profile's citation for datasheet numbers
// a run cannot measure (peak FLOP/s, HBM peak).
#ifndef TRAINSIM_CALIBRATE_PROFILE_BUILDER_H_
#define TRAINSIM_CALIBRATE_PROFILE_BUILDER_H_

#include <optional>
#include <string>

#include "calibrate/measurements.h"
#include "calibrate/profile/document.h"
#include "sim/config/hardware.h"
#include "sim/config/units.h"

namespace trainsim::calibrate {

struct BuildOptions {
  std::string name;          // the profile's name
  std::string date;          // ISO 8601, UTC
  std::string tool_version;  // "trainsim 0.1.0 (git abc1234)"
  std::string command;       // the exact command line
  // A cited profile of the same GPU model: its dense peaks and HBM bandwidth are copied, with their
  // citations, and the measured efficiencies are fractions of them. Without one, the peaks are the
  // best measured GEMM rates and the HBM bandwidth the measured device-copy rate, named as such.
  std::optional<config::HardwareProfile> base;
  std::string base_label;  // how sources name the base (its file name)
};

// Throws std::invalid_argument when the measurements lack what every profile needs (a GEMM sample,
// a device copy, a single-GPU host copy in each direction).
ProfileDocument build_measured_profile(const Measurements& m, const BuildOptions& options);

// `value` rounded to `digits` significant digits (measurements are not more precise than that).
double round_significant(double value, int digits = 4);

// For messages: the exact spelling of a quantity when it is short ("80GiB"), else four significant
// digits ("25.28GB" for 25276502016 bytes).
std::string readable_quantity(double value, config::QuantityKind kind);

}  // namespace trainsim::calibrate

#endif  // TRAINSIM_CALIBRATE_PROFILE_BUILDER_H_
