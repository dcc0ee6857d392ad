#include "sim/validate/measurement.h"

namespace trainsim::validate {

using nlohmann::json;

json to_json(const Measurement& m) {
  json j{{"simulated", m.simulated}, {"role", to_string(m.role)}, {"gpus", m.gpus}, {"profile", m.profile},
         {"stack", m.stack},         {"framework", m.framework},  {"gpu", m.gpu},   {"wall_s", m.wall_s},
         {"cpu_s", m.cpu_s}};
  if (m.iteration_time_s) j["iteration_time_s"] = *m.iteration_time_s;
  if (m.breakdown) j["breakdown"] = report::to_json(*m.breakdown);
  if (m.fits) j["fits"] = *m.fits;
  if (!m.infeasible.empty()) j["infeasible"] = m.infeasible;
  if (m.layers_measured) j["layers_measured"] = *m.layers_measured;
  if (m.volume_bytes) j["volume_bytes"] = *m.volume_bytes;
  if (m.baseline_volume_bytes) j["baseline_volume_bytes"] = *m.baseline_volume_bytes;
  return j;
}

Measurement measurement_from_json(const json& j) {
  Measurement m;
  const json& simulated = j.at("simulated");
  if (!simulated.is_null()) m.simulated = simulated.get<double>();
  m.role = j.at("role").get<std::string>() == to_string(Role::kCalibration) ? Role::kCalibration
                                                                            : Role::kValidation;
  m.gpus = j.at("gpus").get<int64_t>();
  m.profile = j.at("profile").get<std::string>();
  m.stack = j.at("stack").get<bool>();
  m.framework = j.at("framework").get<std::string>();
  m.gpu = j.at("gpu").get<std::string>();
  m.wall_s = j.at("wall_s").get<double>();
  m.cpu_s = j.at("cpu_s").get<double>();
  if (j.contains("iteration_time_s")) m.iteration_time_s = j.at("iteration_time_s").get<double>();
  if (j.contains("breakdown")) m.breakdown = report::breakdown_from_json(j.at("breakdown"));
  if (j.contains("fits")) m.fits = j.at("fits").get<bool>();
  m.infeasible = j.value("infeasible", "");
  if (j.contains("layers_measured")) m.layers_measured = j.at("layers_measured").get<int64_t>();
  if (j.contains("volume_bytes")) m.volume_bytes = j.at("volume_bytes").get<double>();
  if (j.contains("baseline_volume_bytes"))
    m.baseline_volume_bytes = j.at("baseline_volume_bytes").get<double>();
  return m;
}

}  // namespace trainsim::validate
