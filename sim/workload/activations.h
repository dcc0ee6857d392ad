// Activation memory of one transformer layer for one micro-batch on one rank: what the forward
// keeps for the backward, by recompute mode, and the transient working sets. The breakdown is
// Korthikanti et al. 2022, Sec. 4.1 (ground-truth.md A.8), generalised to GQA, SwiGLU, fused
// attention and sequence-parallel schemes; for a GPT-style model it reproduces their Table 2:
//   input + stash = sbh(34 + 5as/h) (no parallelism), sbh(10 + 24/t + 5as/(ht)) (TP),
//   sbh(34/t + 5as/(ht)) (TP + SP), sbh(10 + 24/t) (TP + selective), 34sbh/t (TP + SP +
//   selective), 2sbh (full recompute).
// Tensors kept (e = activation bytes, masks 1 byte; T = GEMM tokens, Tn = norm-region tokens):
//   layer input e*Tn*h (owned by whoever produced it, see builder.h), LN1 output e*Tn*h, Q, K, V,
//   attention output e*T*heads*d, attention core (unfused: softmax output, dropout mask and output
//   2+1+2 bytes per score; fused: fp32 log-sum-exp), attention dropout mask Tn*h, LN2 input and output
//   2*e*Tn*h, FC1 output e*T*ffn (2x for SwiGLU), activation output e*T*ffn, MLP dropout mask Tn*h;
//   Ulysses also keeps the attention output in the head-sharded layout.
// The FPDT layer keeps different tensors; fpdt.cc documents them.
#ifndef TRAINSIM_SIM_WORKLOAD_ACTIVATIONS_H_
#define TRAINSIM_SIM_WORKLOAD_ACTIVATIONS_H_

#include "sim/workload/shapes.h"

namespace trainsim::workload {

struct LayerActivationBytes {
  double input = 0;       // the layer input, kept in every mode
  double stash = 0;       // kept besides the input for the scenario's recompute mode
  double full_stash = 0;  // what recompute none keeps besides the input (rematerialised by full)
  double core = 0;        // attention-core tensors selective recompute drops and rebuilds
  // Approximate transient peaks inside the layer: the largest tensor not kept plus, under
  // Megatron-SP, the gathered input (forward); twice the largest gradient tensor (backward); plus the
  // score matrix (and its gradient) of the unfused kernel.
  double workspace_forward = 0;
  double workspace_backward = 0;
};

// A dense layer, or an MoE layer when `moe`. An MoE layer keeps, instead of the dense MLP's FC1
// and activation outputs: the router's fp32 probabilities (Tn x experts), the local experts' input
// (the dispatched and TP-gathered tokens), FC1 and activation outputs, the expert outputs before
// the combine (which the probabilities' gradient reads), and the shared experts' FC1 and
// activation outputs.
LayerActivationBytes layer_activation_bytes(const RankShapes& shapes, bool moe = false);

}  // namespace trainsim::workload

#endif  // TRAINSIM_SIM_WORKLOAD_ACTIVATIONS_H_
