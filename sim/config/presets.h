// Model presets: the shapes of published models, so a scenario can say `preset: llama3-70b` and
// override only what differs (usually seq_len). Each preset cites where its numbers come from.
#ifndef TRAINSIM_SIM_CONFIG_PRESETS_H_
#define TRAINSIM_SIM_CONFIG_PRESETS_H_

#include <string>
#include <string_view>
#include <vector>

#include "sim/config/scenario.h"

namespace trainsim::config {

struct ModelPreset {
  std::string_view name;
  std::string_view citation;
  Model model;  // complete: every field set, `preset` == name
};

// All presets, in a stable order (by family, then size).
const std::vector<ModelPreset>& model_presets();

// The preset called `name`, or nullptr.
const ModelPreset* find_model_preset(std::string_view name);

}  // namespace trainsim::config

#endif  // TRAINSIM_SIM_CONFIG_PRESETS_H_
