// The calibration harness: runs a plan on a backend, one case after the other, and keeps the
// summary of each case's repetitions.
#ifndef TRAINSIM_CALIBRATE_HARNESS_H_
#define TRAINSIM_CALIBRATE_HARNESS_H_

#include "calibrate/backend.h"
#include "calibrate/measurements.h"
#include "calibrate/plan.h"
#include "calibrate/progress.h"

namespace trainsim::calibrate {

// Times every item of `plan` on `backend`, reporting each to `progress`. A case the backend
// refuses (std::invalid_argument) is left out and named in Measurements::notes; any other error
// (a device failure) propagates and the run stops.
Measurements run_calibration(Backend& backend, const CalibrationPlan& plan, Progress& progress);

}  // namespace trainsim::calibrate

#endif  // TRAINSIM_CALIBRATE_HARNESS_H_
