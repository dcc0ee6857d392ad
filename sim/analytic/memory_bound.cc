#include "sim/analytic/memory_bound.h"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "sim/config/units.h"
#include "sim/workload/activations.h"
#include "sim/workload/errors.h"
#include "sim/workload/layout.h"
#include "sim/workload/pipeline_schedule.h"
#include "sim/workload/plan.h"
#include "sim/workload/shapes.h"

namespace trainsim::analytic {
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
       workload::pipeline_schedule(scenario.parallelism.schedule, s.pp, stage, s.vpp, s.micro_batches,
                                   scenario.parallelism.ep_comm_overlap)) {
    const int64_t layers = layout.layer_count[layout.virtual_stage(stage, step.chunk)];
    if (step.pass == Pass::kForward) in_flight += layers;
    if (step.pass == Pass::kBackward || step.pass == Pass::kInputGrad) in_flight -= layers;
    most = std::max(most, in_flight);
  }
  return most;
}

}  // namespace

MemoryLowerBound memory_lower_bound(const config::Scenario& scenario) {
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
  if (s.scheme.chunked) per_layer = 0;  // activations live on the host

  MemoryLowerBound bound;
  const std::optional<config::RuntimeMemory>& runtime = scenario.cluster.hardware.runtime_memory;
  bound.runtime_bytes = runtime ? runtime->context_bytes : 0.0;
  for (int64_t stage = 0; stage < s.pp; ++stage) {
    MemoryLowerBound here = bound;
    here.stage = stage;
    here.model_state = stage_model_state(s, layout, plan, stage, scenario.training.optimizer);
    here.activation_bytes =
        per_layer > 0 ? static_cast<double>(most_layers_in_flight(scenario, s, layout, stage)) * per_layer
                      : 0.0;
    if (stage == 0 || here.total() > bound.total()) bound = here;
  }
  return bound;
}

std::string memory_bound_refusal(const config::Scenario& scenario) {
  const double usable = scenario.usable_hbm_bytes();
  MemoryLowerBound bound;
  try {
    bound = memory_lower_bound(scenario);
  } catch (const workload::PlanError&) {
    return "";
  }
  if (bound.total() <= usable) return "";

  // The single changes worth naming, each with the bound it would have.
  std::vector<std::string> fixes;
  const auto try_change = [&](const std::string& change, config::Scenario changed) {
    try {
      const double total = memory_lower_bound(changed).total();
      if (total <= usable)
        fixes.push_back(fmt::format("{} ({:.2f} GiB)", change, total / config::kBytesPerGiB));
    } catch (const workload::PlanError&) {
      // not a plan the workload can express: not a fix
    }
  };
  const config::Parallelism& p = scenario.parallelism;
  if (p.dp > 1) {
    for (int stage = p.zero_stage + 1; stage <= 3; ++stage) {
      config::Scenario changed = scenario;
      changed.parallelism.zero_stage = stage;
      try_change(fmt::format("parallelism.zero_stage={}", stage), changed);
    }
  }
  if (p.recompute != config::Recompute::kFull && bound.activation_bytes > 0) {
    config::Scenario changed = scenario;
    changed.parallelism.recompute = config::Recompute::kFull;
    try_change("parallelism.recompute=full", changed);
  }
  if (scenario.training.micro_batch > 1 && bound.activation_bytes > 0) {
    config::Scenario changed = scenario;
    changed.training.micro_batch = 1;
    try_change("training.micro_batch=1", changed);
  }

  if (fixes.empty()) {  // the three together
    config::Scenario changed = scenario;
    if (p.dp > 1) changed.parallelism.zero_stage = 3;
    changed.parallelism.recompute = config::Recompute::kFull;
    changed.training.micro_batch = 1;
    try_change("all of these together", changed);
  }

  const ZeroModelState& state = bound.model_state;
  return fmt::format(
      "before any simulation, a rank of pipeline stage {} needs at least {:.2f} GiB of HBM (weights "
      "{:.2f}, gradients {:.2f}, optimizer state {:.2f}, activations kept for the backward {:.2f}, CUDA "
      "context {:.2f} GiB), more than the {:.2f} GiB usable (the GPU's {:.2f} GiB less the {:g}% "
      "headroom of training.memory_headroom). {}; more tensor or pipeline parallelism shares the model "
      "state over more GPUs (trainsim search ranks such plans)",
      bound.stage, bound.total() / config::kBytesPerGiB, state.weights / config::kBytesPerGiB,
      state.gradients / config::kBytesPerGiB, state.optimizer / config::kBytesPerGiB,
      bound.activation_bytes / config::kBytesPerGiB, bound.runtime_bytes / config::kBytesPerGiB,
      usable / config::kBytesPerGiB, scenario.cluster.hardware.gpu.hbm_capacity_bytes / config::kBytesPerGiB,
      100 * scenario.training.memory_headroom,
      fixes.empty()
          ? std::string("No higher ZeRO stage, full recomputation or micro-batch 1, alone or together, "
                        "is enough")
          : fmt::format("Changes whose bound would be within it: {}", fmt::join(fixes, ", ")));
}

}  // namespace trainsim::analytic
