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

ModelStateBytes model_state_bytes(config::Optimizer optimizer, int weight_bytes, int grad_bytes,
                                  int zero_stage, int64_t params, int64_t shards) {
  TRAINSIM_WORKLOAD_CHECK(shards >= 1 && zero_stage >= 0 && zero_stage <= 3)
      << "shards " << shards << " zero stage " << zero_stage;
  const double psi = static_cast<double>(params);
  const double n = static_cast<double>(shards);
  const double e = weight_bytes;
  const double g = grad_bytes;
  const double k = optimizer_bytes_per_param(optimizer, weight_bytes);
  ModelStateBytes m;
  m.weights = zero_stage >= 3 ? e * psi / n : e * psi;
  m.gradients = zero_stage >= 2 ? g * psi / n : g * psi;
  m.optimizer = zero_stage >= 1 ? k * psi / n : k * psi;
  m.optimizer_params = zero_stage >= 1 ? psi / n : psi;
  m.step_bytes_per_param = 2 * k + g + e;
  m.step_flops_per_param = optimizer == config::Optimizer::kSgd     ? 4
                           : optimizer == config::Optimizer::kAdamW ? 14
                                                                    : 12;
  return m;
}

}  // namespace trainsim::workload
