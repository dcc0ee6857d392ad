#include "sim/search/memory_bound.h"

#include <algorithm>
#include <optional>

#include "sim/analytic/memory.h"
#include "sim/workload/activations.h"
#include "sim/workload/layout.h"
#include "sim/workload/pipeline_schedule.h"
#include "sim/workload/plan.h"
#include "sim/workload/shapes.h"

namespace trainsim::search {
namespace {

// The most layers whose activations `stage` holds at once: after each forward step of its schedule,
// the layers of every (micro-batch, chunk) gone forward but not yet backward. A split backward's B
// pass frees the stash but for what its W pass reads, which the bound leaves out (it can be smaller
// than the stash, and a lower bound may undercount, never overcount).
int64_t most_layers_in_flight(const config::Scenario& scenario, const workload::RankShapes& s,
                              const workload::StageLayout& layout, int64_t stage) {
  using workload::Pass;
  int64_t in_flight = 0;
  int64_t most = 0;
  for (const workload::PipelineStep& step :
       workload::pipeline_schedule(scenario.parallelism.schedule, s.pp, stage, s.vpp, s.micro_batches)) {
    const int64_t layers = layout.layer_count[layout.virtual_stage(stage, step.chunk)];
    if (step.pass == Pass::kForward) in_flight += layers;
    if (step.pass == Pass::kBackward || step.pass == Pass::kInputGrad) in_flight -= layers;
    most = std::max(most, in_flight);
  }
  return most;
}

}  // namespace

double memory_lower_bound_bytes(const config::Scenario& scenario) {
  const workload::ParallelPlan plan = workload::make_plan(scenario);
  const workload::RankShapes s = workload::derive_shapes(scenario, plan);
  const workload::StageLayout layout = workload::partition_layers(s);
  // Per layer in flight: the lighter of the layer kinds the model has (dense, MoE).
  const auto kept = [&s](bool moe) {
    const workload::LayerActivationBytes act = workload::layer_activation_bytes(s, moe);
    return act.stash + (s.cpu_checkpointing ? 0.0 : act.input);
  };
  double per_layer = s.experts == 0 ? kept(false) : kept(true);
  if (s.experts > 0 && s.dense_layers > 0) per_layer = std::min(per_layer, kept(false));
  if (s.scheme == config::SequenceParallel::kFpdt) per_layer = 0;  // activations live on the host

  double bound = 0;
  for (int64_t stage = 0; stage < s.pp; ++stage) {
    const double state =
        analytic::stage_model_state(s, layout, plan, stage, scenario.training.optimizer).total();
    const double activations =
        per_layer > 0 ? static_cast<double>(most_layers_in_flight(scenario, s, layout, stage)) * per_layer
                      : 0.0;
    bound = std::max(bound, state + activations);
  }
  const std::optional<config::RuntimeMemory>& runtime = scenario.cluster.hardware.runtime_memory;
  return bound + (runtime ? runtime->context_bytes : 0.0);
}

}  // namespace trainsim::search
