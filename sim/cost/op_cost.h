// How long each op of a rank's operation graph keeps its GPU (or its host) busy: the one place where
// graph ops become kernel times (GEMMs, attention, memory-bound passes, the optimizer step, host
// synchronisations), shared by the engine, the closed-form estimate and the comparison with measured
// runs. Communication is priced by the transports (cost/alpha_beta.h, cost/collective.h).
#ifndef TRAINSIM_SIM_COST_OP_COST_H_
#define TRAINSIM_SIM_COST_OP_COST_H_

#include <vector>

#include "sim/cost/compute_model.h"
#include "sim/workload/graph.h"

namespace trainsim::cost {

// The two parts of an unfused attention op (`op.attention.fused` false) at the profile's rates: the
// batched GEMMs (QK^T and PV, each twice in the backward) and the softmax/dropout passes.
struct UnfusedAttentionTimes {
  double gemm_s = 0;
  double memory_s = 0;
};
UnfusedAttentionTimes unfused_attention_times(const workload::Op& op, const ComputeModel& compute);

// How long each op of `graph` takes on the compute side (0 for ops whose time comes from the
// network or from rendezvous), on a GPU whose kernels run at `speed` times the profile's rates.
std::vector<double> compute_durations(const workload::Graph& graph, const ComputeModel& compute,
                                      double speed = 1);

}  // namespace trainsim::cost

#endif  // TRAINSIM_SIM_COST_OP_COST_H_
