// Enumerations shared by the scenario, topology and hardware-profile types, with their spellings in
// the YAML files (the one table both the decoders and `trainsim show` use).
#ifndef TRAINSIM_SIM_CONFIG_TYPES_H_
#define TRAINSIM_SIM_CONFIG_TYPES_H_

#include <array>
#include <cstdint>
#include <string_view>
#include <utility>

namespace trainsim::config {

enum class Activation { kGelu, kSwiglu };
enum class Norm { kLayerNorm, kRmsNorm };
enum class PositionEmbedding { kLearned, kRope };
// The attention kernel a model trains with: unfused (softmax(QK^T)V as batched GEMMs and memory passes
// that store the scores, Megatron-LM's CoreAttention), fused (a flash-style kernel that never stores
// them, priced at the hardware profile's attention rates), or auto (resolved from the framework and the
// model when the scenario is read: Scenario::attention_kernel).
enum class AttentionKernel { kAuto, kUnfused, kFused };
// The fused attention implementation a hardware profile's attention rates describe, whose thread-block
// tiling the cost model follows (sim/cost/attention_waves.h): this project's mma.sync and wgmma kernels
// (kernels/attention), FlashAttention-2 or FlashAttention-3.
enum class FusedAttentionKernel { kMmaSync, kWgmma, kFlashAttention2, kFlashAttention3 };
enum class Dtype { kFp64, kFp32, kTf32, kBf16, kFp16, kFp8 };
enum class Schedule { kGpipe, kOneFOneB, kInterleaved, kZeroBubble, kZbV, kDualPipeV };
// Schedules that place two model chunks per stage in a V (stage s runs virtual stages s and 2pp - 1 - s).
constexpr bool v_shaped_schedule(Schedule s) { return s == Schedule::kZbV || s == Schedule::kDualPipeV; }
// Schedules that may run vpp > 1 model chunks per pipeline stage.
constexpr bool chunked_schedule(Schedule s) {
  return s == Schedule::kInterleaved || s == Schedule::kZeroBubble || v_shaped_schedule(s);
}
// Whether `s` with `vpp` chunks per stage needs the micro-batches per replica to be a multiple of pp:
// the chunked schedules in Megatron's order (Narayanan et al. 2021, Sec. 2.2.2), not the V-shaped ones.
constexpr bool micro_batches_multiple_of_pp(Schedule s, int64_t vpp) {
  return chunked_schedule(s) && !v_shaped_schedule(s) && vpp > 1;
}
// The fewest micro-batches per replica `s` runs with `pp` stages: DualPipeV's 2pp (DeepSeek's rule),
// one for the others.
constexpr int64_t min_micro_batches(Schedule s, int64_t pp) { return s == Schedule::kDualPipeV ? 2 * pp : 1; }
// Schedules that split each backward into input- and weight-gradient passes.
constexpr bool split_backward_schedule(Schedule s) {
  return s == Schedule::kZeroBubble || v_shaped_schedule(s);
}
enum class SequenceParallel { kNone, kMegatron, kUlysses, kRing, kFpdt };
// What a sequence-parallel scheme does to a layer: the modules that build, count and price layers
// ask this instead of naming schemes (the plan rules, which judge the schemes themselves, name them).
struct SequenceScheme {
  // Megatron's sequence parallelism: outside attention each tensor-parallel rank holds seq/tp tokens
  // (norms, dropouts and residuals sharded; all-gathers and reduce-scatters in place of all-reduces).
  // Megatron-Core's context parallelism keeps it. Takes effect with tp > 1.
  bool shards_over_tp = false;
  // A group of sp ranks splits the sequence (parallelism.sp).
  bool sp_group = false;
  // Attention sees the whole sequence with heads/sp of the heads, all-to-alls around it
  // (DeepSpeed-Ulysses and FPDT).
  bool heads_over_sp = false;
  // Attention exchanges K/V between the sequence shards (a ring of sends or an all-gather, cp_comm).
  bool exchanges_kv = false;
  // Each layer runs chunk by chunk over the sequence, its activations offloadable to the host (FPDT).
  bool chunked = false;
  // The loss gathers every token's fp32 loss over the sp group (DeepSpeed's sequence-parallel cross
  // entropy); otherwise an sp group all-reduces the loss's sum (Megatron-Core's context parallelism).
  bool gathers_token_losses = false;
};
constexpr SequenceScheme sequence_scheme(SequenceParallel kind) {
  switch (kind) {
    case SequenceParallel::kNone:
      return {};
    case SequenceParallel::kMegatron:
      return {.shards_over_tp = true};
    case SequenceParallel::kUlysses:
      return {.sp_group = true, .heads_over_sp = true, .gathers_token_losses = true};
    case SequenceParallel::kRing:
      return {.shards_over_tp = true, .sp_group = true, .exchanges_kv = true};
    case SequenceParallel::kFpdt:
      return {.sp_group = true, .heads_over_sp = true, .chunked = true, .gathers_token_losses = true};
  }
  return {};
}
// How context parallelism (sequence_parallel: ring) exchanges K/V: a ring of send/receives that overlaps
// the attention blocks, or one all-gather (and a reduce-scatter of their gradients) around them
// (Megatron-Core's cp_comm_type p2p and all_gather).
enum class CpComm { kP2p, kAllGather };
enum class Recompute { kNone, kSelective, kFull };
// AdamW keeps Adam's two moments; its decoupled weight decay is one more multiply-add per parameter
// in the same pass.
enum class Optimizer { kAdam, kAdamW, kSgd };
// The training framework a scenario models: it supplies the defaults of the keys a scenario leaves out
// (gradient precision, bucket sizes, overlap, FSDP resharding; sim/config/framework.cc cites each) and
// decides which plans compose (ZeRO-3 under pipeline parallelism). generic: the simulator's own
// defaults, tied to no framework.
enum class Framework { kGeneric, kMegatronLm, kMegatronDeepSpeed, kDeepSpeed, kTorchtitan, kNemo };
// The Megatron-LM family (NeMo runs Megatron-Core) and the DeepSpeed family.
constexpr bool megatron_framework(Framework f) {
  return f == Framework::kMegatronLm || f == Framework::kNemo;
}
constexpr bool deepspeed_framework(Framework f) {
  return f == Framework::kDeepSpeed || f == Framework::kMegatronDeepSpeed;
}
enum class IntraNodeKind { kNvSwitch, kNvLinkMesh, kPcie };
enum class FabricKind { kSingleNode, kFatTree, kRailOptimized, kDragonfly, kTorus };
// How a tree fabric spreads traffic over the parallel cables between two switch levels: adaptive
// (the trunk's bandwidth shared by all flows, as adaptive routing or packet spraying approach), ecmp
// (each GPU pair's flow hashed onto one cable, so flows that collide share it) or d-mod-k (the
// cable picked by the destination, as InfiniBand's static fat-tree routing does).
enum class FabricRouting { kAdaptive, kEcmp, kDModK };
enum class ProvenanceKind { kCited, kMeasured, kImported, kDerived };
// Collectives as nccl-tests names them (all_reduce_perf, ...), for measured tables in profiles.
enum class CollectiveKind {
  kAllReduce,
  kAllGather,
  kReduceScatter,
  kAllToAll,
  kSendRecv,
  kBroadcast,
  kReduce,
  kBarrier
};
// The NCCL algorithm a measured collective table was timed with (NCCL_ALGO=Ring, Tree or NVLS); a
// table without one is of NCCL's own choice at each size.
enum class CollectiveAlgorithm { kRing, kTree, kNvls };
enum class AttentionPass { kForward, kBackward };
enum class CopyDirection { kHostToDevice, kDeviceToHost };

// Bytes per element of `dtype` (fp8: 1, bf16/fp16: 2, fp32/tf32: 4, fp64: 8).
int dtype_bytes(Dtype dtype);

// What a training dtype keeps weights, activations, gradients and messages in: itself, except fp8
// training (Transformer Engine's hybrid recipe, as Megatron-Core runs it), which keeps them in bf16
// and runs only the linear layers' GEMMs in fp8.
constexpr Dtype storage_dtype(Dtype training) { return training == Dtype::kFp8 ? Dtype::kBf16 : training; }

// The spelling of each enumerator in the YAML files, in declaration order.
template <class E>
struct EnumNames;

#define TRAINSIM_ENUM_NAMES(E, ...)                                                              \
  template <>                                                                                    \
  struct EnumNames<E> {                                                                          \
    static constexpr auto kNames = std::to_array<std::pair<E, std::string_view>>({__VA_ARGS__}); \
  }

TRAINSIM_ENUM_NAMES(Activation, {Activation::kGelu, "gelu"}, {Activation::kSwiglu, "swiglu"});
TRAINSIM_ENUM_NAMES(Norm, {Norm::kLayerNorm, "layernorm"}, {Norm::kRmsNorm, "rmsnorm"});
TRAINSIM_ENUM_NAMES(PositionEmbedding, {PositionEmbedding::kLearned, "learned"},
                    {PositionEmbedding::kRope, "rope"});
TRAINSIM_ENUM_NAMES(AttentionKernel, {AttentionKernel::kAuto, "auto"}, {AttentionKernel::kUnfused, "unfused"},
                    {AttentionKernel::kFused, "fused"});
TRAINSIM_ENUM_NAMES(FusedAttentionKernel, {FusedAttentionKernel::kMmaSync, "mma.sync"},
                    {FusedAttentionKernel::kWgmma, "wgmma"},
                    {FusedAttentionKernel::kFlashAttention2, "flash-attention-2"},
                    {FusedAttentionKernel::kFlashAttention3, "flash-attention-3"});
TRAINSIM_ENUM_NAMES(Dtype, {Dtype::kFp64, "fp64"}, {Dtype::kFp32, "fp32"}, {Dtype::kTf32, "tf32"},
                    {Dtype::kBf16, "bf16"}, {Dtype::kFp16, "fp16"}, {Dtype::kFp8, "fp8"});
TRAINSIM_ENUM_NAMES(Schedule, {Schedule::kGpipe, "gpipe"}, {Schedule::kOneFOneB, "1f1b"},
                    {Schedule::kInterleaved, "interleaved"}, {Schedule::kZeroBubble, "zero-bubble"},
                    {Schedule::kZbV, "zb-v"}, {Schedule::kDualPipeV, "dualpipev"});
TRAINSIM_ENUM_NAMES(SequenceParallel, {SequenceParallel::kNone, "none"},
                    {SequenceParallel::kMegatron, "megatron"}, {SequenceParallel::kUlysses, "ulysses"},
                    {SequenceParallel::kRing, "ring"}, {SequenceParallel::kFpdt, "fpdt"});
TRAINSIM_ENUM_NAMES(CpComm, {CpComm::kP2p, "p2p"}, {CpComm::kAllGather, "all_gather"});
TRAINSIM_ENUM_NAMES(Recompute, {Recompute::kNone, "none"}, {Recompute::kSelective, "selective"},
                    {Recompute::kFull, "full"});
TRAINSIM_ENUM_NAMES(Optimizer, {Optimizer::kAdam, "adam"}, {Optimizer::kAdamW, "adamw"},
                    {Optimizer::kSgd, "sgd"});
TRAINSIM_ENUM_NAMES(Framework, {Framework::kGeneric, "generic"}, {Framework::kMegatronLm, "megatron-lm"},
                    {Framework::kMegatronDeepSpeed, "megatron-deepspeed"},
                    {Framework::kDeepSpeed, "deepspeed"}, {Framework::kTorchtitan, "torchtitan"},
                    {Framework::kNemo, "nemo"});
TRAINSIM_ENUM_NAMES(IntraNodeKind, {IntraNodeKind::kNvSwitch, "nvswitch"},
                    {IntraNodeKind::kNvLinkMesh, "nvlink-mesh"}, {IntraNodeKind::kPcie, "pcie"});
TRAINSIM_ENUM_NAMES(FabricKind, {FabricKind::kSingleNode, "single-node"}, {FabricKind::kFatTree, "fat-tree"},
                    {FabricKind::kRailOptimized, "rail-optimized"}, {FabricKind::kDragonfly, "dragonfly"},
                    {FabricKind::kTorus, "torus"});
TRAINSIM_ENUM_NAMES(FabricRouting, {FabricRouting::kAdaptive, "adaptive"}, {FabricRouting::kEcmp, "ecmp"},
                    {FabricRouting::kDModK, "d-mod-k"});
TRAINSIM_ENUM_NAMES(ProvenanceKind, {ProvenanceKind::kCited, "cited"},
                    {ProvenanceKind::kMeasured, "measured"}, {ProvenanceKind::kImported, "imported"},
                    {ProvenanceKind::kDerived, "derived"});

TRAINSIM_ENUM_NAMES(CollectiveKind, {CollectiveKind::kAllReduce, "all_reduce"},
                    {CollectiveKind::kAllGather, "all_gather"},
                    {CollectiveKind::kReduceScatter, "reduce_scatter"},
                    {CollectiveKind::kAllToAll, "alltoall"}, {CollectiveKind::kSendRecv, "sendrecv"},
                    {CollectiveKind::kBroadcast, "broadcast"}, {CollectiveKind::kReduce, "reduce"},
                    {CollectiveKind::kBarrier, "barrier"});
TRAINSIM_ENUM_NAMES(CollectiveAlgorithm, {CollectiveAlgorithm::kRing, "ring"},
                    {CollectiveAlgorithm::kTree, "tree"}, {CollectiveAlgorithm::kNvls, "nvls"});
TRAINSIM_ENUM_NAMES(AttentionPass, {AttentionPass::kForward, "forward"},
                    {AttentionPass::kBackward, "backward"});
TRAINSIM_ENUM_NAMES(CopyDirection, {CopyDirection::kHostToDevice, "h2d"},
                    {CopyDirection::kDeviceToHost, "d2h"});

#undef TRAINSIM_ENUM_NAMES

// The YAML spelling of `value`.
template <class E>
constexpr std::string_view to_string(E value) {
  for (const auto& [e, name] : EnumNames<E>::kNames) {
    if (e == value) return name;
  }
  return "?";
}

}  // namespace trainsim::config

#endif  // TRAINSIM_SIM_CONFIG_TYPES_H_
