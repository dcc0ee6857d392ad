// What measuring one validation case finds (metrics.h measure()), typed, with the JSON it crosses the
// process boundary in (each case is measured in a child process, common/isolated.h) and that the
// validation report copies from.
#ifndef TRAINSIM_SIM_VALIDATE_MEASUREMENT_H_
#define TRAINSIM_SIM_VALIDATE_MEASUREMENT_H_

#include <cstdint>
#include <limits>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "sim/report/breakdown.h"
#include "sim/validate/case.h"

namespace trainsim::validate {

struct Measurement {
  double simulated = std::numeric_limits<double>::quiet_NaN();  // the metric's value; NaN: none
  Role role = Role::kValidation;                                // metrics.h role_of
  int64_t gpus = 0;
  std::string profile;    // the hardware or stack profile's name
  bool stack = false;     // whether that is a stack profile
  std::string framework;  // accuracy.h regime_framework
  std::string gpu;        // the GPU's name (hardware profile)
  // Metrics read from a simulated iteration: its time, the critical rank's breakdown, whether the plan
  // fits and, when not, why.
  std::optional<double> iteration_time_s;
  std::optional<report::Breakdown> breakdown;
  std::optional<bool> fits;
  std::string infeasible;
  std::optional<int64_t> layers_measured;  // layer_forward_s, layer_backward_s
  std::optional<double> volume_bytes;      // comm_volume_ratio: the case's and its baseline's volumes
  std::optional<double> baseline_volume_bytes;
  // Host time measuring took (set by the runner).
  double wall_s = 0;
  double cpu_s = 0;
};

// The measurement under the keys the validation report gives a case (simulated, role, gpus, profile,
// stack, framework, gpu, and those of the optional fields that are set; wall_s, cpu_s).
nlohmann::json to_json(const Measurement& m);
// The measurement to_json wrote (a null "simulated" reads as NaN). Throws nlohmann::json::exception
// when a field it always writes is missing.
Measurement measurement_from_json(const nlohmann::json& j);

}  // namespace trainsim::validate

#endif  // TRAINSIM_SIM_VALIDATE_MEASUREMENT_H_
