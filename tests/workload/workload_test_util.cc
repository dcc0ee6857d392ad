#include "tests/workload/workload_test_util.h"

#include <stdexcept>
#include <string>

#include "sim/config/presets.h"
#include "sim/workload/builder.h"

namespace trainsim::testing {

config::Scenario make_scenario(std::string_view preset, int64_t global_batch, int64_t micro_batch,
                               const PlanSpec& plan) {
  const config::ModelPreset* found = config::find_model_preset(preset);
  if (found == nullptr) throw std::invalid_argument("no model preset " + std::string(preset));
  config::Scenario s;
  s.name = std::string(preset);
  s.model = found->model;
  s.training.global_batch = global_batch;
  s.training.micro_batch = micro_batch;
  s.parallelism.tp = plan.tp;
  s.parallelism.pp = plan.pp;
  s.parallelism.dp = plan.dp;
  s.parallelism.sp = plan.sp;
  s.parallelism.vpp = plan.vpp;
  s.parallelism.ep = plan.ep;
  s.parallelism.expert_tp = plan.expert_tp;
  s.parallelism.schedule = plan.schedule;
  s.parallelism.sequence_parallel = plan.sequence;
  s.parallelism.zero_stage = plan.zero;
  s.parallelism.recompute = plan.recompute;
  // Ring attention and FPDT need the fused kernel, which a GPT-style model's file names explicitly.
  if (plan.sequence == config::SequenceParallel::kRing || plan.sequence == config::SequenceParallel::kFpdt)
    s.model.attention = config::AttentionKernel::kFused;
  s.cluster.gpus = plan.tp * plan.pp * plan.dp * plan.sp;
  s.cluster.topology.node.gpus = 8;
  return s;
}

std::vector<workload::Graph> build_all_ranks(const config::Scenario& scenario,
                                             const workload::ParallelPlan& plan) {
  std::vector<workload::Graph> graphs;
  graphs.reserve(static_cast<size_t>(plan.world_size()));
  for (int64_t rank = 0; rank < plan.world_size(); ++rank) {
    graphs.push_back(workload::build_rank_graph(scenario, plan, rank));
  }
  return graphs;
}

}  // namespace trainsim::testing
