// Helpers shared by the workload and analytic tests: scenarios built in code from a model preset and
// a few plan numbers.
#ifndef TRAINSIM_TESTS_WORKLOAD_WORKLOAD_TEST_UTIL_H_
#define TRAINSIM_TESTS_WORKLOAD_WORKLOAD_TEST_UTIL_H_

#include <cstdint>
#include <string_view>
#include <vector>

#include "sim/config/scenario.h"
#include "sim/workload/graph.h"
#include "sim/workload/plan.h"

namespace trainsim::testing {

struct PlanSpec {
  int64_t tp = 1, pp = 1, dp = 1, sp = 1, vpp = 1;
  int64_t ep = 1;
  int64_t expert_tp = 0;  // 0: tp
  config::Schedule schedule = config::Schedule::kOneFOneB;
  config::SequenceParallel sequence = config::SequenceParallel::kNone;
  int zero = 0;
  config::Recompute recompute = config::Recompute::kNone;
};

// A scenario with the model of `preset` (sim/config/presets.h), the batch sizes and the plan;
// cluster.gpus is the product of the degrees, 8 GPUs per node, bf16, Adam; the fused attention kernel
// under ring attention and FPDT (which need it), the model's own otherwise.
config::Scenario make_scenario(std::string_view preset, int64_t global_batch, int64_t micro_batch,
                               const PlanSpec& plan);

// Every rank's graph.
std::vector<workload::Graph> build_all_ranks(const config::Scenario& scenario,
                                             const workload::ParallelPlan& plan);

// Sum of `bytes` over the ops of `graph` that satisfy `pred`.
template <class Pred>
double sum_bytes(const workload::Graph& graph, Pred pred) {
  double total = 0;
  for (const workload::Op& op : graph.ops()) {
    if (pred(op)) total += op.bytes;
  }
  return total;
}

template <class Pred>
int64_t count_ops(const workload::Graph& graph, Pred pred) {
  int64_t n = 0;
  for (const workload::Op& op : graph.ops()) n += pred(op) ? 1 : 0;
  return n;
}

}  // namespace trainsim::testing

#endif  // TRAINSIM_TESTS_WORKLOAD_WORKLOAD_TEST_UTIL_H_
