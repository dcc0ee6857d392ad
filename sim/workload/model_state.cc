#include "sim/workload/model_state.h"

#include "sim/workload/errors.h"

namespace trainsim::workload {

int optimizer_bytes_per_param(config::Optimizer optimizer, int weight_bytes) {
  const bool mixed = weight_bytes < 4;
  switch (optimizer) {
    case config::Optimizer::kAdam:
    case config::Optimizer::kAdamW:
      return mixed ? 12 : 8;
    case config::Optimizer::kSgd:
      return mixed ? 8 : 4;
  }
  return 0;
}

ModelStateBytes model_state_bytes(const RankShapes& shapes, config::Optimizer optimizer, int64_t params,
                                  int64_t shards) {
  const int zero_stage = shapes.zero_stage;
  TRAINSIM_WORKLOAD_CHECK(shards >= 1 && zero_stage >= 0 && zero_stage <= 3)
      << "shards " << shards << " zero stage " << zero_stage;
  const double psi = static_cast<double>(params);
  const double n = static_cast<double>(shards);
  const double g = shapes.grad_bytes;
  const double k = optimizer_bytes_per_param(optimizer, shapes.act_bytes);
  // The fp32 master copy moves from the optimizer state into the weight shards.
  const double master = shapes.master_weight_shards ? 4 : 0;
  const double e = shapes.master_weight_shards ? master : shapes.act_bytes;
  ModelStateBytes m;
  m.weights = zero_stage >= 3 ? e * psi / n : e * psi;
  m.gradients = zero_stage >= 2 ? g * psi / n : g * psi;
  m.optimizer = (zero_stage >= 1 ? psi / n : psi) * (k - master);
  m.optimizer_params = zero_stage >= 1 ? psi / n : psi;
  // The update reads and writes the states and reads the gradient (fp32 main gradients, converted
  // from lower-precision ones first, where the framework keeps them); the framework's other passes
  // each read the gradient, or read and write it; the training-dtype weights are written, from a
  // separate read of the master copy where the framework copies it, unless the master shards are
  // those weights.
  const config::Scenario::OptimizerPasses& passes = shapes.optimizer_passes;
  const double update_grad = passes.fp32_main_grads ? 4 : g;
  double step = 2 * k + update_grad;
  if (passes.fp32_main_grads && g < 4) step += g + 4;
  if (passes.unscale) step += 2 * update_grad;
  if (passes.grad_norm) step += update_grad;
  if (passes.clip) step += 2 * update_grad;
  if (!shapes.master_weight_shards) step += shapes.act_bytes + (passes.copy_to_model ? 4 : 0);
  m.step_bytes_per_param = step;
  m.step_flops_per_param = optimizer == config::Optimizer::kSgd     ? 4
                           : optimizer == config::Optimizer::kAdamW ? 14
                                                                    : 12;
  return m;
}

}  // namespace trainsim::workload
