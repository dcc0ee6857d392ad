// One transformer layer of one micro-batch, op by op as the simulator prices it: where a layer's time
// goes, to set beside published per-layer timings (Korthikanti et al. 2022, Table 4) and analytical
// decompositions (Calculon's per-layer accounting). `trainsim analyze --layer N` prints it.
#ifndef TRAINSIM_SIM_ESTIMATE_LAYER_BUDGET_H_
#define TRAINSIM_SIM_ESTIMATE_LAYER_BUDGET_H_

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/config/scenario.h"
#include "sim/workload/graph.h"

namespace trainsim::estimate {

// The ops of one phase with the same label, kind and shape.
struct LayerBudgetLine {
  workload::Phase phase = workload::Phase::kForward;
  workload::OpLabel label = workload::OpLabel::kNorm;
  workload::OpKind kind = workload::OpKind::kMemory;
  std::string shape;  // GEMM m x n x k and pass, attention lengths and heads, collective and group, bytes
  int64_t calls = 0;
  // Kernels: GPU time at the hardware profile's (and stack's) rates; transfers: alone on the network
  // as `--network ideal` prices them. Summed over the calls, overlap not counted.
  double time_s = 0;
  double flops = 0;  // executed
};

struct LayerBudget {
  int64_t rank = 0;  // the first rank whose graph holds the layer
  int32_t layer = 0;
  int32_t micro_batch = 0;
  std::vector<LayerBudgetLine> lines;  // by phase, then in the order the graph issues them
  std::vector<std::string> warnings;   // the cost model's: shapes beyond measured data, missing rates
};

// The budget of global `layer` on the first rank that holds it, for its first micro-batch (and the
// layer's once-per-iteration ops: gradient buckets, ZeRO-3 gathers). Throws std::invalid_argument
// naming the model's layers when none holds it, and workload::PlanError when the plan cannot be built.
LayerBudget layer_budget(const config::Scenario& scenario, int32_t layer);

// A table: every line with its share of its phase, then each phase's kernel and transfer totals.
std::string render_layer_budget(const LayerBudget& budget);
nlohmann::json to_json(const LayerBudget& budget);

}  // namespace trainsim::estimate

#endif  // TRAINSIM_SIM_ESTIMATE_LAYER_BUDGET_H_
