#include "sim/estimate/layer_budget.h"

#include <stdexcept>
#include <string>

#include <gtest/gtest.h>

#include "sim/config/loader.h"
#include "sim/cost/compute_model.h"
#include "sim/cost/op_cost.h"
#include "sim/workload/builder.h"
#include "sim/workload/plan.h"

namespace trainsim::estimate {
namespace {

using workload::OpKind;
using workload::Phase;

config::Scenario korthikanti_22b() {
  return config::load_scenario(std::string(TRAINSIM_SOURCE_DIR) +
                               "/scenarios/validation/korthikanti-table4/base/megatron-22b-tp8.yaml");
}

// The 22B layer of Korthikanti et al. Table 4 (hidden 6144, 64 heads, TP 8, micro-batch 4 of 2048
// tokens): Megatron's four forward GEMMs with their 24 b s h^2 / tp FLOPs, its two tensor-parallel
// all-reduces of the b s h activations, and every backward GEMM twice (input and weight gradients).
TEST(LayerBudget, KorthikantiLayerHasMegatronsGemmsAndAllReduces) {
  const LayerBudget budget = layer_budget(korthikanti_22b(), 1);
  EXPECT_EQ(budget.layer, 1);
  double forward_gemm_flops = 0;
  int64_t forward_gemms = 0, backward_gemms = 0, all_reduces = 0;
  for (const LayerBudgetLine& l : budget.lines) {
    EXPECT_GT(l.calls, 0);
    EXPECT_GE(l.time_s, 0);
    if (l.kind == OpKind::kGemm && l.phase == Phase::kForward) {
      forward_gemm_flops += l.flops;
      forward_gemms += l.calls;
    }
    if (l.kind == OpKind::kGemm && l.phase == Phase::kBackward) backward_gemms += l.calls;
    if (l.kind == OpKind::kCollective) {
      all_reduces += l.calls;
      EXPECT_NE(l.shape.find("all_reduce over tp (8), 96.00 MiB"), std::string::npos) << l.shape;
      EXPECT_GT(l.time_s, 0);
    }
  }
  EXPECT_EQ(forward_gemms, 4);
  EXPECT_EQ(backward_gemms, 8);
  EXPECT_EQ(all_reduces, 4);  // two forward, two backward
  EXPECT_DOUBLE_EQ(forward_gemm_flops, 24.0 * 4 * 2048 * 6144.0 * 6144.0 / 8);
}

// The budget's kernel times are the engine's: they add up to the compute durations of the layer's
// first-micro-batch ops in the rank's graph.
TEST(LayerBudget, KernelTimesAreTheCostModels) {
  const config::Scenario s = korthikanti_22b();
  const LayerBudget budget = layer_budget(s, 0);
  double kernels_s = 0;
  for (const LayerBudgetLine& l : budget.lines) {
    if (l.kind != OpKind::kCollective) kernels_s += l.time_s;
  }
  const workload::ParallelPlan plan = workload::make_plan(s);
  const workload::Graph graph = workload::build_rank_graph(s, plan, budget.rank);
  WarningLog warnings;
  const cost::ComputeModel compute(s.cluster.hardware, &warnings);
  const std::vector<double> durations = cost::compute_durations(graph, compute);
  double expected_s = 0;
  for (workload::OpId id = 0; id < graph.size(); ++id) {
    const workload::Op& op = graph.op(id);
    if (op.layer == 0 && (op.micro_batch == budget.micro_batch || op.micro_batch < 0))
      expected_s += durations[id];
  }
  EXPECT_NEAR(kernels_s, expected_s, 1e-12);
  EXPECT_GT(kernels_s, 0);
}

// What the cost model warns about while pricing the layer comes with the budget: on the measured H200
// profile, the unfused attention's batched score GEMMs (k = head_dim 96) lie outside its GEMM table.
TEST(LayerBudget, CarriesTheCostModelsWarnings) {
  const std::string profile =
      std::string(TRAINSIM_SOURCE_DIR) + "/calibrate/profiles/h200-measured-20261130.yaml";
  const config::Scenario s =
      config::load_scenario(std::string(TRAINSIM_SOURCE_DIR) +
                                "/scenarios/validation/korthikanti-table4/base/megatron-22b-tp8.yaml",
                            {config::parse_override("cluster.hardware=" + profile)});
  const LayerBudget budget = layer_budget(s, 0);
  ASSERT_FALSE(budget.warnings.empty());
  EXPECT_NE(budget.warnings.front().find("outside the measured GEMM range"), std::string::npos)
      << budget.warnings.front();
  EXPECT_NE(render_layer_budget(budget).find("# warning: gemm"), std::string::npos);
}

TEST(LayerBudget, ALayerOutsideTheModelIsRefusedWithTheRange) {
  try {
    layer_budget(korthikanti_22b(), 48);
    FAIL() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("the model has layers 0 to 47"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace trainsim::estimate
