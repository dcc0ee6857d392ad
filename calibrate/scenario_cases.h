// The GEMM and attention shapes one training step of a scenario issues on one GPU, for the
// calibration to measure exactly what the simulation will ask for. Derived from the model and
// parallel plan alone (sim/config's scenario type), Megatron-style:
//   per layer, tokens T = micro_batch · seq_len / sp (the sequence-parallel shard; FPDT projects
//   one chunk at a time, T = micro_batch · chunk_tokens / sp), weights split over tp:
//     QKV      T x (heads + 2·kv_heads)·head_dim / tp x hidden
//     output   T x hidden x heads·head_dim / tp
//     MLP up   T x ffn_hidden·(2 for SwiGLU) / tp x hidden;  MLP down  T x hidden x ffn_hidden / tp
//     logits   T x vocab / tp x hidden
//   each in the forward (X·Wᵀ), input-gradient and weight-gradient shapes.
//   Attention per GPU: heads / (tp·sp) query heads (kv_heads / (tp·sp), at least 1), the whole
//   sequence for Ulysses and no sequence parallelism, one chunk against one chunk for FPDT (the
//   causal diagonal and the full off-diagonal blocks), seq_len / sp blocks for ring attention;
//   forward and backward.
#ifndef TRAINSIM_CALIBRATE_SCENARIO_CASES_H_
#define TRAINSIM_CALIBRATE_SCENARIO_CASES_H_

#include <vector>

#include "calibrate/cases.h"
#include "sim/config/scenario.h"

namespace trainsim::calibrate {

// In the scenario's training dtype, without duplicates, in a fixed order.
std::vector<GemmCase> scenario_gemms(const config::Scenario& scenario);
std::vector<AttentionCase> scenario_attentions(const config::Scenario& scenario);

}  // namespace trainsim::calibrate

#endif  // TRAINSIM_CALIBRATE_SCENARIO_CASES_H_
