// Internal to sim/config/plan_rules.cc: the rules by theme, each file appending its own to the table.
#ifndef TRAINSIM_SIM_CONFIG_PLAN_RULES_GROUPS_H_
#define TRAINSIM_SIM_CONFIG_PLAN_RULES_GROUPS_H_

#include <vector>

#include "sim/config/plan_rules.h"

namespace trainsim::config::internal {

// What most rules read: the model and the parallel plan.
constexpr unsigned kModelAndPlan = kModelSection | kParallelismSection;

// Tensor and pipeline parallelism against the model, the pipeline schedules, recomputation.
void add_layout_rules(std::vector<PlanRule>& rules);
// ZeRO stages against the framework and the pipeline.
void add_zero_rules(std::vector<PlanRule>& rules);
// Sequence parallelism (Megatron, Ulysses, ring attention, FPDT) against the model.
void add_sequence_rules(std::vector<PlanRule>& rules);
// Expert parallelism against the model and the other degrees.
void add_expert_rules(std::vector<PlanRule>& rules);
// The degrees, the batch and the stragglers against the cluster; the dtype against the hardware.
void add_cluster_rules(std::vector<PlanRule>& rules);

}  // namespace trainsim::config::internal

#endif  // TRAINSIM_SIM_CONFIG_PLAN_RULES_GROUPS_H_
