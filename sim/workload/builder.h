// Entry points that turn a scenario into per-rank operation graphs for one training iteration.
//
// What one rank's graph holds, in issue order:
//   setup      the runtime's memory when the hardware profile gives it (CUDA context, NCCL buffers
//              of the communicators the graph uses; runtime_memory.h), then allocations of its model
//              state: weights, gradients, optimizer states (by ZeRO stage; model_state.h), ZeRO-2's
//              reduction bucket;
//   schedule   its pipeline stage's forward and backward passes (pipeline_schedule.h), each a run
//              of layers of one model chunk for one micro-batch, with the receive of its input
//              (from the previous virtual stage) before it and the send of its output after it
//              (message e*b*tokens*h, sequence-sharded under Megatron-SP and sequence parallelism);
//              the embedding on virtual stage 0, final norm/LM head/loss on the last;
//   optimizer  the data-parallel gradient reduction that was not overlapped (dp.h), the tied
//              embedding's all-reduce across the first and last stage, the all-reduce of
//              sequence-parallel norm gradients over TP (Megatron finalize_model_grads), the step,
//              and ZeRO-1/2's parameter all-gather;
//   teardown   frees of the model state and the runtime's memory, so every allocation in a graph is
//              freed in it.
// Buffers: a layer's input is allocated by whoever produces it (embedding, previous layer, receive)
// and freed by that layer's backward; activations kept for backward follow activations.h; a
// pipeline output is freed once sent (Megatron's deallocate_output_tensor).
#ifndef TRAINSIM_SIM_WORKLOAD_BUILDER_H_
#define TRAINSIM_SIM_WORKLOAD_BUILDER_H_

#include <cstdint>
#include <vector>

#include "sim/config/scenario.h"
#include "sim/workload/graph.h"
#include "sim/workload/plan.h"

namespace trainsim::workload {

// The graph of `rank` (0 <= rank < plan.world_size()). Throws PlanError when the scenario cannot be
// expressed (see shapes.h); aborts on an internal invariant. Costs O(ops of that rank); nothing is
// built for other ranks.
Graph build_rank_graph(const config::Scenario& scenario, const ParallelPlan& plan, int64_t rank);

// The graphs of `ranks`, in their order (the shared shapes and layer layout derived once).
std::vector<Graph> build_rank_graphs(const config::Scenario& scenario, const ParallelPlan& plan,
                                     const std::vector<int64_t>& ranks);

// One graph per symmetry class (plan.symmetry_classes() order), built for each representative.
std::vector<Graph> build_class_graphs(const config::Scenario& scenario, const ParallelPlan& plan);

}  // namespace trainsim::workload

#endif  // TRAINSIM_SIM_WORKLOAD_BUILDER_H_
