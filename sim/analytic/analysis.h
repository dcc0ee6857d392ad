// The closed-form model of a scenario in one struct, and its side-by-side comparison with the
// numbers derived from the operation graphs (workload/summary.h).
#ifndef TRAINSIM_SIM_ANALYTIC_ANALYSIS_H_
#define TRAINSIM_SIM_ANALYTIC_ANALYSIS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/analytic/comm_volume.h"
#include "sim/analytic/flops.h"
#include "sim/analytic/memory.h"
#include "sim/analytic/params.h"
#include "sim/config/scenario.h"
#include "sim/workload/summary.h"

namespace trainsim::analytic {

struct StageAnalysis {
  int64_t stage = 0;
  int64_t layers = 0;           // over all model chunks of the stage
  int64_t params_per_rank = 0;  // before ZeRO sharding
  ZeroModelState model_state;   // per rank
  // Korthikanti Table 2 bytes per layer and micro-batch, when the scenario is one of Table 2's
  // configurations, and the stage's in-flight activations: the paper's first-stage formula for
  // stage 0; for stage k of 1F1B its generalisation to min(p - k, m) micro-batches in flight (GPipe:
  // m); none for later stages of the interleaved schedule, which the paper does not give.
  std::optional<double> layer_activation_bytes;
  std::optional<double> stage_activation_bytes;
  std::vector<ExpectedComm> comm;
};

struct Analysis {
  ParameterCount parameters;
  std::optional<double> narayanan_parameters;  // GPT-style models only
  IterationFlops flops;
  std::optional<double> narayanan_flops;                       // GPT-style with full recompute
  std::optional<double> korthikanti_model_flops;               // GPT-style
  std::optional<double> korthikanti_selective_hardware_flops;  // GPT-style with selective recompute
  double bubble_fraction = 0;  // analytic/bubble.h, the zero-bubble passes weighed by their FLOPs
  std::vector<StageAnalysis> stages;
  std::optional<FpdtMemory> fpdt;
};

// Whether the published GPT formulas apply: MHA, 4h GeLU MLP with biases, LayerNorm, learned
// positions, tied embeddings, heads x head_dim == hidden.
bool gpt_style(const config::Model& model);

// The scenario's ideal pipeline bubble (analytic/bubble.h), its zero-bubble passes weighed by the
// shares of `flops` (the scenario's iteration_flops) that they run.
double pipeline_bubble_fraction(const config::Scenario& scenario, const IterationFlops& flops);

// Throws workload::PlanError when the scenario's plan cannot be expressed.
Analysis analyze(const config::Scenario& scenario);

// One row of the side-by-side view.
struct Comparison {
  std::string quantity;  // e.g. "model_flops_per_iteration", "comm all_reduce tp"
  std::string scope;     // "iteration", "class 0", ...
  double graph = 0;      // derived from the operation graphs
  double closed_form = 0;
  double relative_difference = 0;  // (graph - closed_form) / closed_form, 0 when both are 0
  std::string note;                // why they differ, or what the closed form leaves out
};

// Graph-derived against closed-form numbers, with the reason for every difference the model knows
// of. A difference without a reason reads "unexplained".
std::vector<Comparison> compare(const config::Scenario& scenario, const Analysis& analysis,
                                const workload::WorkloadSummary& summary);

nlohmann::json to_json(const Analysis& analysis);
nlohmann::json to_json(const Comparison& comparison);

}  // namespace trainsim::analytic

#endif  // TRAINSIM_SIM_ANALYTIC_ANALYSIS_H_
