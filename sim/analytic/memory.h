// Closed-form memory models: Korthikanti et al. 2022 activation memory (ground-truth.md A.8),
// ZeRO model states (A.9) and the FPDT worked example's quantities (seed-papers.md A9).
#ifndef TRAINSIM_SIM_ANALYTIC_MEMORY_H_
#define TRAINSIM_SIM_ANALYTIC_MEMORY_H_

#include <cstdint>

#include "sim/config/scenario.h"
#include "sim/workload/layout.h"
#include "sim/workload/plan.h"
#include "sim/workload/shapes.h"

namespace trainsim::analytic {

// The rows of Korthikanti et al. 2022 Table 2.
enum class ActivationConfig {
  kNoParallelism,                    // sbh(34 + 5as/h)
  kTensorParallel,                   // sbh(10 + 24/t + 5as/(ht))
  kTensorSequenceParallel,           // sbh(34/t + 5as/(ht))
  kTensorParallelSelective,          // sbh(10 + 24/t)
  kTensorSequenceParallelSelective,  // sbh(34/t)
  kFullRecompute,                    // 2sbh
};

// Activation bytes of one layer (16-bit activations, 1-byte dropout masks) for sequence s,
// micro-batch b, hidden h, heads a and TP degree t.
double korthikanti_layer_activation_bytes(ActivationConfig config, double s, double b, double h, double a,
                                          double t);

// The Table 2 row of a scenario, for GPT-style models under plain TP or Megatron-SP; false when
// the scenario is outside the table (RoPE models, Ulysses, ring, FPDT).
bool korthikanti_config(const config::Scenario& scenario, ActivationConfig* config);

// Activation memory of the first pipeline stage (Korthikanti Sec. 4.2.3): it holds p in-flight
// micro-batches of L/p layers under 1F1B, i.e. L x the per-layer bytes whatever p; the interleaved
// schedule multiplies by (1 + (p - 1)/(p * v)). GPipe keeps all m micro-batches: L/p x m. Zero
// bubble and ZB-V keep min(p, m) micro-batches' worth of L/p layers on every stage, whatever v (a
// micro-batch holds its activations until its weight-gradient pass; pipeline_schedule.h); DualPipeV
// holds one chunk of L/(2p) layers more: min(p + 1/2, m).
double korthikanti_first_stage_activation_bytes(double layer_bytes, int64_t layers, int64_t pp, int64_t vpp,
                                                int64_t micro_batches, config::Schedule schedule);

// The ZeRO model states of one rank of `stage` (workload/model_state.h): its dense parameters sharded
// over the data-parallel group, its expert parameters over the expert-data-parallel group; with ZeRO-3
// under pipelining, plus the stage's gathered weights and unsharded gradients, held for the whole
// iteration.
struct ZeroModelState {
  double weights = 0, gradients = 0, optimizer = 0;
  double total() const { return weights + gradients + optimizer; }
};
ZeroModelState stage_model_state(const workload::RankShapes& shapes, const workload::StageLayout& layout,
                                 const workload::ParallelPlan& plan, int64_t stage,
                                 config::Optimizer optimizer);

// FPDT quantities of seed-papers.md A9 for one GPU (b = micro_batch, e = activation bytes):
struct FpdtMemory {
  int64_t chunks = 0;                // u
  double q_chunk_bytes = 0;          // b*c*(H/P)*d*e
  double kv_chunk_bytes = 0;         // b*c*(H_kv/P)*d*e, each of k and v
  double out_accumulator_bytes = 0;  // fp32 b*c*(H/P)*d*4
  double x_chunk_bytes = 0;          // b*(c/P)*h*e
  double sequence_tensor_bytes = 0;  // one O(S/P) tensor b*(S/P)*h*e
  // Host memory per live layer: x + q + k + v + o (bf16), lse (fp32) and the fp32 dq buffers of
  // chunks 1..u-1 (DeepSpeed keeps dq of chunk 0 on the GPU; A9 rounds this to all u chunks).
  double host_per_live_layer_bytes = 0;
  double host_checkpoint_bytes = 0;  // L x one O(S/P) tensor with CPU checkpointing, else 0
};
FpdtMemory fpdt_memory(const config::Scenario& scenario);

}  // namespace trainsim::analytic

#endif  // TRAINSIM_SIM_ANALYTIC_MEMORY_H_
