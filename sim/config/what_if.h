// What-if settings: values a scenario (`cluster.topology_set`, `cluster.hardware_set`) or a cluster
// file puts over the topology or hardware profile it names, so that a different cluster (faster
// NICs, a tapered fabric, ECMP, more HBM) is one setting, a `--set` or a sweep axis away instead of a
// copied file. They stack above the file like `--set` layers (keys there win, maps merge, lists
// replace), are decoded and checked as the file's own keys, and are located where they were written.
// A loaded Topology or HardwareProfile lists the values they changed (`what_if`), which reports
// show beside the file's name and hash.
#ifndef TRAINSIM_SIM_CONFIG_WHAT_IF_H_
#define TRAINSIM_SIM_CONFIG_WHAT_IF_H_

#include <string>
#include <string_view>
#include <vector>

#include "sim/config/diagnostics.h"

namespace trainsim::config {

// One value set over a topology or hardware profile.
struct WhatIf {
  std::string key;    // dotted path in the file, e.g. "fabric.oversubscription"
  std::string value;  // as YAML in flow style, e.g. "2", "800Gbps", "[4, 4, 4]"
  Location where;     // where the scenario, cluster file or --set wrote it
};

// Whether `key` is one of the `what_if` keys or lies below one (a key "gpu" covers "gpu.hbm").
bool set_by_what_if(const std::vector<WhatIf>& what_if, std::string_view key);

// Whether some what-if key is `prefix` or lies below it (what-ifs on "gpu.peak_flops.bf16" touch
// "gpu.peak_flops").
bool what_if_touches(const std::vector<WhatIf>& what_if, std::string_view prefix);

}  // namespace trainsim::config

#endif  // TRAINSIM_SIM_CONFIG_WHAT_IF_H_
