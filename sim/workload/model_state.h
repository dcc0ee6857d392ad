// Bytes of model state one rank keeps for the whole iteration (Rajbhandari et al. 2020, ZeRO;
// ground-truth.md A.9). With Ψ parameters on the rank before sharding, N ranks in the ZeRO group
// (dp, or dp x sp), e bytes per weight (the training dtype), g per gradient element (the gradient
// dtype: ZeRO's 2 + 2 for fp16/bf16; Megatron's fp32 main gradients, 2 + 4) and K bytes of optimizer
// state per parameter:
//   ZeRO-0  weights eΨ    gradients gΨ    optimizer KΨ       (16Ψ for mixed-precision Adam, 18Ψ
//   ZeRO-1  eΨ            gΨ              KΨ/N                with fp32 gradients: Megatron-LM's
//   ZeRO-2  eΨ            gΨ/N            KΨ/N                docs/source/distrib_optimizer.md)
//   ZeRO-3  eΨ/N          gΨ/N            KΨ/N
// FSDP2 keeps no training-dtype shard beside the master copy: its ZeRO-3 weight shards are the fp32
// master weights, cast to the training dtype for each all-gather ("FSDP does not require any extra
// memory to keep a high-precision copy of the parameters for the optimizer step", MixedPrecisionPolicy
// in torch/distributed/fsdp/_fully_shard/_fsdp_api.py), so its weights take 4Ψ/N and its optimizer
// (K - 4)Ψ/N: 16Ψ/N in all with fp32 gradients, where ZeRO-3 with fp32 gradients takes 18Ψ/N.
#ifndef TRAINSIM_SIM_WORKLOAD_MODEL_STATE_H_
#define TRAINSIM_SIM_WORKLOAD_MODEL_STATE_H_

#include <cstdint>

#include "sim/config/types.h"
#include "sim/workload/shapes.h"

namespace trainsim::workload {

// K: mixed-precision Adam keeps an fp32 master copy, momentum and variance (12 bytes); Adam in fp32
// only the two moments (8); SGD with momentum a master copy and the momentum (8), or the momentum
// alone in fp32 (4).
int optimizer_bytes_per_param(config::Optimizer optimizer, int weight_bytes);

struct ModelStateBytes {
  double weights = 0;
  double gradients = 0;
  double optimizer = 0;
  double optimizer_params = 0;  // parameters this rank updates (Ψ, or Ψ/N with ZeRO >= 1)
  // The optimizer step reads and writes the states (2K), reads the gradient and writes the weight:
  // 2K + g + e bytes per updated parameter, plus the framework's passes (RankShapes::
  // optimizer_passes): Megatron-LM with bf16 and fp32 main gradients 2K + 4 + 4 (norm) + 4 + e (the
  // master copy read for the weights), 38; with fp16 52. FLOPs per parameter are an estimate: Adam's moment
  // updates, bias corrections and the square-root update come to about 12; SGD with momentum to 4.
  double step_bytes_per_param = 0;
  double step_flops_per_param = 0;
};

// The model state of `params` parameters sharded over `shards` ranks, stored as `shapes` says (its
// act_bytes, grad_bytes, zero_stage and master_weight_shards).
ModelStateBytes model_state_bytes(const RankShapes& shapes, config::Optimizer optimizer, int64_t params,
                                  int64_t shards);

}  // namespace trainsim::workload

#endif  // TRAINSIM_SIM_WORKLOAD_MODEL_STATE_H_
