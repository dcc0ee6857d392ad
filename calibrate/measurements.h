// What a calibration run measured: every case of the plan with the summary of its repetitions, and
// the facts of the device it ran on. The profile builder turns this into a hardware profile.
#ifndef TRAINSIM_CALIBRATE_MEASUREMENTS_H_
#define TRAINSIM_CALIBRATE_MEASUREMENTS_H_

#include <optional>
#include <string>
#include <vector>

#include "calibrate/backend.h"
#include "calibrate/cases.h"
#include "calibrate/statistics.h"

namespace trainsim::calibrate {

template <class Case>
struct Measured {
  Case c;
  Summary summary;
};

struct DeviceCopyMeasurement {
  double bytes = 0;  // copied (read once and written once)
  Summary summary;
};

struct Measurements {
  DeviceFacts facts;
  TimingPolicy compute_policy;
  TimingPolicy collective_policy;
  TimingPolicy copy_policy;
  std::vector<Measured<GemmCase>> gemms;
  std::vector<Measured<AttentionCase>> attentions;
  std::vector<Measured<CollectiveCase>> collectives;
  std::vector<Measured<CopyCase>> copies;
  std::vector<DeviceCopyMeasurement> device_copies;
  Summary launch;
  Summary host_sync;
  std::optional<Summary> pipeline_sync;  // FPDT per-block host-sync cost, when the backend has it
  GemmCase interference_gemm;
  CollectiveCase interference_collective;
  Summary interference_alone;
  Summary interference_concurrent;
  std::optional<PowerSamples> power;  // absent when the backend reads no power
  GemmCase power_gemm;                // what measure_power ran, for the profile's sources
  double power_copy_bytes = 0;
  double power_hold_s = 0;
  std::vector<std::string> notes;  // what was left out and why
  double wall_s = 0;
};

}  // namespace trainsim::calibrate

#endif  // TRAINSIM_CALIBRATE_MEASUREMENTS_H_
