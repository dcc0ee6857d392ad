// The distinct calls a scenario's simulation prices, read from its rank-class graphs: what a
// calibration of one node has to measure for the simulation to read its own shapes instead of
// interpolating between others. Kernels are listed as the cost model looks them up (sim/cost):
//   GEMMs       in the op's dtype, a grouped GEMM (MoE experts) at its stacked shape
//               (groups·m) x n x k; an unfused attention kernel's batched GEMMs
//               (unfused_attention_gemms) too;
//   attention   the fused (flash) kernels, forward and backward, at their block shape;
//   collectives and point-to-point messages by kind, group size and bytes (nccl-tests' "size": 0 for
//               a barrier), with whether the group lies within one node of the scenario's topology
//               (only those can be measured on one node);
//   copies      host<->device copies by direction and bytes (FPDT's offloads and fetches).
// Memory-bound kernels are priced from the profile's HBM bandwidth and have no shape to measure.
#ifndef TRAINSIM_SIM_WORKLOAD_KERNEL_SHAPES_H_
#define TRAINSIM_SIM_WORKLOAD_KERNEL_SHAPES_H_

#include <cstdint>
#include <vector>

#include "sim/config/scenario.h"
#include "sim/config/types.h"
#include "sim/workload/graph.h"
#include "sim/workload/plan.h"

namespace trainsim::workload {

struct KernelShapes {
  struct Gemm {
    config::Dtype dtype;
    int64_t m, n, k;
    bool operator==(const Gemm&) const = default;
  };
  struct Attention {
    config::AttentionPass pass;
    config::Dtype dtype;
    int64_t batch, heads, kv_heads, q_len, kv_len, head_dim, value_dim;
    bool causal;
    bool operator==(const Attention&) const = default;
  };
  struct Collective {
    config::CollectiveKind kind;  // kSendRecv for a pipeline or ring-attention message
    int64_t ranks;
    double bytes;
    bool one_node;  // every member on one node of the topology
    bool operator==(const Collective&) const = default;
  };
  struct Copy {
    config::CopyDirection direction;
    double bytes;
    bool operator==(const Copy&) const = default;
  };
  // Each without duplicates, in the order the graphs first issue them (symmetry classes in order).
  std::vector<Gemm> gemms;
  std::vector<Attention> attentions;
  std::vector<Collective> collectives;
  std::vector<Copy> copies;
};

// The calls of `graphs` (ranks of `plan`), with group placement from `topology`'s GPUs per node
// (GPU r on node r / node.gpus).
KernelShapes kernel_shapes(const std::vector<Graph>& graphs, const ParallelPlan& plan,
                           const config::Topology& topology);

// The calls of the scenario's symmetry-class graphs. Throws PlanError as build_class_graphs does.
KernelShapes kernel_shapes(const config::Scenario& scenario);

}  // namespace trainsim::workload

#endif  // TRAINSIM_SIM_WORKLOAD_KERNEL_SHAPES_H_
