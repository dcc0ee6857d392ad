// Closed-form FLOPs of one training iteration (all GPUs together), by the convention of Narayanan
// et al. 2021 and Korthikanti et al. 2022: matmuls only, attention counted as non-causal
// (4*s^2*H*d per layer and sequence in the forward), backward = 2x forward, model FLOPs without
// and hardware FLOPs with recomputation.
#ifndef TRAINSIM_SIM_ANALYTIC_FLOPS_H_
#define TRAINSIM_SIM_ANALYTIC_FLOPS_H_

#include "sim/config/scenario.h"

namespace trainsim::analytic {

struct IterationFlops {
  double forward_layers = 0;     // one forward of every transformer layer, whole batch
  double forward_attention = 0;  // the attention cores' part of forward_layers
  double forward_logits = 0;     // one forward of the LM head, whole batch
  double model = 0;              // 3 x (layers + logits)
  // model + what recomputation repeats: full: the layers' forward; selective (unfused attention):
  // the attention core's forward (4*s^2*H*d per layer and sequence); FPDT: FPDT_FFN's FC1 and
  // FPDT_LogitsLoss's logits, which their backwards recompute chunk by chunk.
  double hardware = 0;
};

// Generalised to GQA, SwiGLU, any FFN width and vocabulary: per sequence, a layer's forward is
// 2*s*(h(H+2H_kv)d + Hdh + h*f*(1|2) + f*h) + 4*s^2*H*d and the logits 2*s*h*V. An MoE layer's MLP
// term is the router's h*E plus (top_k + shared) expert MLPs of f_e: the FLOPs of the routed tokens,
// not of capacity padding.
IterationFlops iteration_flops(const config::Scenario& scenario);

// The published formulas, for GPT-style models with global batch B:
//   Narayanan (A.7, full recompute): 96*B*s*l*h^2*(1 + s/(6h) + V/(16*l*h))
//   Korthikanti model FLOPs (A.8):   72*B*s*l*h^2*(1 + s/(6h) + V/(12*h*l))
//   Korthikanti hardware FLOPs with selective recompute (A.8): 72*B*s*l*h^2*(1 + s/(3h) + V/(12*h*l)).
//   The paper charges the recomputed attention core 12*s^2*h per layer and sequence, three times
//   its forward (4*s^2*h); iteration_flops() charges the forward once, as the recompute runs it.
double narayanan_flops(const config::Model& model, double global_batch);
double korthikanti_model_flops(const config::Model& model, double global_batch);
double korthikanti_selective_hardware_flops(const config::Model& model, double global_batch);

}  // namespace trainsim::analytic

#endif  // TRAINSIM_SIM_ANALYTIC_FLOPS_H_
