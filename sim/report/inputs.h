// The provenance of a run's input files: each file's name and content hash, and the what-if values
// (config/what_if.h) that a scenario, cluster file or --set put over its topology and hardware
// profile, so that a report says which cluster it describes when that is not the files' own.
#ifndef TRAINSIM_SIM_REPORT_INPUTS_H_
#define TRAINSIM_SIM_REPORT_INPUTS_H_

#include <string>

#include <nlohmann/json.hpp>

#include "sim/config/scenario.h"

namespace trainsim::report {

// {"name", "hash"} of a topology or hardware profile, plus "what_if": [{"key", "value", "where"}]
// when something was set over it ("where": file:line:col, or "--set" for the command line); a stack
// profile adds "stack": {"framework", "hardware" (the profile beneath), "parameters" (those not neutral)}.
nlohmann::json topology_input(const config::Topology& topology);
nlohmann::json hardware_input(const config::HardwareProfile& hardware);

// {"scenario": {"path", "hash"}, "topology": ..., "hardware": ...}: provenance.inputs of a scenario's run.
nlohmann::json scenario_inputs(const config::Scenario& scenario);

// The table line naming the topology and the hardware or stack profile of `inputs` (a
// provenance.inputs object): "# on topology T, stack profile S (megatron-lm) on hardware profile H".
std::string render_inputs(const nlohmann::json& inputs);

// The table section listing the what-ifs of `inputs` (a provenance.inputs object), one line each:
// "topology dgx-h100-cluster: fabric.oversubscription = 2 (x.yaml:14:7)"; empty when there are none.
std::string render_what_if(const nlohmann::json& inputs);

}  // namespace trainsim::report

#endif  // TRAINSIM_SIM_REPORT_INPUTS_H_
