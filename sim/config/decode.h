// Internal to sim/config: the decoders of each file kind, working on located Nodes. loader.cc reads
// files, stacks `extends` and `--set` layers and calls these; tests use loader.h instead.
#ifndef TRAINSIM_SIM_CONFIG_DECODE_H_
#define TRAINSIM_SIM_CONFIG_DECODE_H_

#include <functional>
#include <string_view>
#include <vector>

#include "sim/config/hardware.h"
#include "sim/config/node.h"
#include "sim/config/scenario.h"
#include "sim/config/topology.h"
#include "sim/config/what_if.h"

namespace trainsim::config::internal {

// Loads a file referenced by the value at `ref` (cluster.topology, cluster.hardware) into `out`, with
// the what-if map `set` (cluster.topology_set, cluster.hardware_set; may be undefined) over it;
// returns false when it could not (errors recorded, located at `ref` for unreadable files).
using TopologyLoader =
    std::function<bool(const Node& ref, const Node& set, const std::filesystem::path&, Topology& out)>;
using HardwareLoader =
    std::function<bool(const Node& ref, const Node& set, const std::filesystem::path&, HardwareProfile& out)>;

// Decodes a scenario root map (schema_version and extends already checked per file) and runs the
// cross-field checks on the sections that decoded cleanly.
void decode_scenario(const Node& root, Scenario& out, const TopologyLoader& load_topology,
                     const HardwareLoader& load_hardware);
// Decodes a scenario's `stragglers` map. Slow NICs are checked against `cluster`'s topology and the
// ranks each entry slows counted once when it is given (null: the cluster section did not load); the
// plan rule stragglers-in-cluster holds ranks and nodes to the cluster.
void decode_stragglers(MapReader& m, Stragglers& out, const Cluster* cluster);
// Decodes a `cost` map (a profile's, or a scenario's cluster.cost): price_per_gpu_hour, "2.50USD".
void decode_cost(MapReader& m, Cost& out);
// Decodes a price in US dollars written as a number followed by `unit` ("USD", "USD/kWh"); records
// an error showing `example` and returns false when it is not a positive one.
bool decode_usd(const Node& node, std::string_view unit, std::string_view example, double& out);
// Decodes a scenario's `campaign` map (the whole training run).
void decode_campaign(MapReader& m, Campaign& out);
void decode_topology(const Node& root, Topology& out);
// Decodes a hardware profile; values that `out.what_if` (filled before) names need no source.
void decode_hardware(const Node& root, HardwareProfile& out);
// Decodes the `stack` section of a stack profile (`root`, the whole file) into out.stack.
void decode_stack(const Node& root, const Node& stack, HardwareProfile& out);

// The layers of a what-if map (what_if.h), to stack above a file of `file_kind` ("topology",
// "hardware profile"); none when `set` is undefined. Records an error (and returns none) when `set`
// is not a map, sets schema_version or extends, or spells a key with dots; `example` shows the form.
std::vector<Layer> what_if_layers(const Node& set, std::string_view file_kind, std::string_view example);
// The values the `layers` above a file set, highest layer first winning.
std::vector<WhatIf> collect_what_ifs(const std::vector<Layer>& layers);

}  // namespace trainsim::config::internal

#endif  // TRAINSIM_SIM_CONFIG_DECODE_H_
