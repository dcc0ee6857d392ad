// What each training framework does with the keys a scenario leaves out, and which ZeRO stages it
// runs under pipeline parallelism. Each default cites the framework's source.
#include <algorithm>
#include <limits>

#include <fmt/format.h>

#include "sim/config/scenario.h"

namespace trainsim::config {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;

}  // namespace

Dtype Scenario::gradient_dtype() const {
  if (training.grad_dtype) return *training.grad_dtype;
  const Dtype storage = storage_dtype(training.dtype);
  switch (framework) {
    case Framework::kMegatronLm:
    case Framework::kNemo:
      // Megatron-LM forces accumulate_allreduce_grads_in_fp32 for bf16 (megatron/training/arguments.py:
      // "bfloat16 requires gradient accumulation and all-reduce to be done in fp32"); NeMo's bf16-mixed
      // precision plugin sets grad_reduce_in_fp32.
      return storage == Dtype::kBf16 ? Dtype::kFp32 : storage;
    case Framework::kTorchtitan:
      // FSDP2's MixedPrecisionPolicy reduce_dtype from training.mixed_precision_reduce = "float32"
      // (torchtitan/config/job_config.py).
      return Dtype::kFp32;
    case Framework::kGeneric:
    case Framework::kDeepSpeed:
    case Framework::kMegatronDeepSpeed:
      // DeepSpeed's communication_data_type defaults to the model's fp16/bf16 (deepspeed/runtime/engine.py).
      return storage;
  }
  return storage;
}

bool Scenario::overlap_grad_reduce() const {
  if (parallelism.overlap_grad_reduce) return *parallelism.overlap_grad_reduce;
  switch (framework) {
    case Framework::kMegatronLm:
      return false;  // --overlap-grad-reduce is off unless given (megatron/training/arguments.py)
    case Framework::kNemo:
      return true;  // NeMo's recipes build DistributedDataParallelConfig(overlap_grad_reduce=True)
    case Framework::kDeepSpeed:
    case Framework::kMegatronDeepSpeed:
      // zero_optimization.overlap_comm: true for stage 3, false otherwise (deepspeed/runtime/zero/config.py).
      return parallelism.zero_stage == 3;
    case Framework::kTorchtitan:  // DDP's reducer and FSDP2's reduce-scatters run during the backward
    case Framework::kGeneric:
      return true;
  }
  return true;
}

bool Scenario::overlap_p2p_comm() const {
  if (parallelism.overlap_p2p_comm) return *parallelism.overlap_p2p_comm;
  switch (framework) {
    case Framework::kMegatronLm:
      // --no-overlap-p2p-communication turns it off (megatron/training/arguments.py, dest
      // overlap_p2p_comm, on by default). Earlier releases left it off unless --overlap-p2p-communication
      // was given, and the 2021 release waited for every exchange (the validation scenarios of those
      // papers set it off).
    case Framework::kNemo:
      // MegatronCommOverlapCallback sets overlap_p2p_comm with pipeline and virtual stages
      // (nemo/lightning/pytorch/callbacks/megatron_comm_overlap.py, _get_model_comm_overlap_cfgs;
      // Megatron-Bridge's CommOverlapConfig the same).
      return true;
    case Framework::kDeepSpeed:
    case Framework::kMegatronDeepSpeed:  // --overlap-p2p-communication, off unless given
    case Framework::kTorchtitan:
    case Framework::kGeneric:
      return false;
  }
  return false;
}

bool Scenario::moe_host_sync() const {
  if (parallelism.moe_host_sync) return *parallelism.moe_host_sync;
  switch (framework) {
    case Framework::kMegatronLm:
    case Framework::kNemo:
      // Megatron-Core's dropless MoEAlltoAllTokenDispatcher copies the token counts to the host and
      // waits for them (_maybe_dtoh_and_synchronize at "before_ep_alltoall", or "before_finish"
      // without expert parallelism, where the grouped GEMM takes its split sizes from the host),
      // megatron/core/transformer/moe/token_dispatcher.py.
      return true;
    case Framework::kTorchtitan:
      // ExpertParallel._token_dispatch copies the split sizes to the host with non_blocking=False
      // before the all-to-all ("this would incur a device-to-host sync"); without expert
      // parallelism the grouped GEMM reads its offsets on the device
      // (torchtitan/distributed/expert_parallel.py).
      return parallelism.ep > 1;
    case Framework::kDeepSpeed:
    case Framework::kMegatronDeepSpeed:
      // DeepSpeed-MoE's gate pads every expert to its capacity: all-to-alls of a fixed size
      // (deepspeed/moe/sharded_moe.py).
    case Framework::kGeneric:
      return false;
  }
  return false;
}

bool Scenario::micro_batch_sync() const {
  if (parallelism.micro_batch_sync) return *parallelism.micro_batch_sync;
  switch (framework) {
    case Framework::kDeepSpeed:
    case Framework::kMegatronDeepSpeed:
      // DeepSpeed's throughput timer synchronises the device when it starts, and it starts with each
      // micro-batch: in PipelineEngine._exec_forward_pass, in DeepSpeedEngine.forward when the engine
      // owns no data loader, and in the next() of the loader it builds otherwise
      // (ThroughputTimer.start in deepspeed/utils/timer.py: get_accelerator().synchronize(),
      // unconditional until the timers.throughput.synchronized option, default true, of 0.10).
      return true;
    case Framework::kMegatronLm:
    case Framework::kNemo:
    case Framework::kTorchtitan:
    case Framework::kGeneric:
      return false;
  }
  return false;
}

double Scenario::dp_bucket_bytes() const {
  if (parallelism.dp_bucket_bytes) return *parallelism.dp_bucket_bytes;
  const double grad_bytes = dtype_bytes(gradient_dtype());
  switch (framework) {
    case Framework::kMegatronLm:
    case Framework::kNemo: {
      // Megatron-Core's DistributedDataParallel: max(40M, 1M x data-parallel size with context
      // parallelism) parameters per bucket, and one bucket (bucket_size None) without overlap.
      if (!overlap_grad_reduce()) return std::numeric_limits<double>::infinity();
      const double ranks = static_cast<double>(parallelism.dp * parallelism.sp);
      return std::max(40e6, 1e6 * ranks) * grad_bytes;
    }
    case Framework::kDeepSpeed:
    case Framework::kMegatronDeepSpeed:
      return 5e8 * grad_bytes;  // zero_optimization.reduce_bucket_size: 5e8 elements
    case Framework::kTorchtitan:
      return 100 * kMiB;  // replicate(..., bucket_cap_mb=100) (torchtitan's apply_ddp)
    case Framework::kGeneric:
      return 25 * kMiB;  // PyTorch DDP's bucket_cap_mb default
  }
  return 25 * kMiB;
}

double Scenario::zero3_gather_bucket_bytes() const {
  if (parallelism.zero3_gather_bucket_bytes) return *parallelism.zero3_gather_bucket_bytes;
  switch (framework) {
    case Framework::kDeepSpeed:
    case Framework::kMegatronDeepSpeed:
      // Stage 3 all-gathers the parameters of the submodule in use, then prefetches the next ones in
      // the trace until stage3_prefetch_bucket_size elements (5e7) are in flight, each batch one
      // coalesced all-gather (deepspeed/runtime/zero/config.py; partitioned_param_coordinator.py,
      // fetch_sub_module).
      return 5e7 * dtype_bytes(storage_dtype(training.dtype));
    case Framework::kTorchtitan:  // fully_shard per transformer block: one all-gather per unit
    case Framework::kGeneric:
    case Framework::kMegatronLm:
    case Framework::kNemo:
      return std::numeric_limits<double>::infinity();
  }
  return std::numeric_limits<double>::infinity();
}

int64_t Scenario::zero3_persistence_threshold() const {
  if (parallelism.zero3_persistence_threshold) return *parallelism.zero3_persistence_threshold;
  // DeepSpeed keeps parameters of fewer than stage3_param_persistence_threshold elements (1e5) whole
  // on every rank (deepspeed/runtime/zero/config.py); FSDP shards every parameter of a unit.
  return deepspeed_framework(framework) ? 100000 : 0;
}

bool Scenario::zero3_bucketed_reduce() const {
  // DeepSpeed stage 3 adds each gradient to its ipg bucket and reduce-scatters the bucket once the
  // next gradient would take it past reduce_bucket_size, and at the end of every backward
  // (deepspeed/runtime/zero/stage3.py, reduce_independent_p_g_buckets_and_remove_grads and
  // independent_gradient_partition_epilogue); FSDP reduce-scatters each unit in its post-backward.
  return deepspeed_framework(framework);
}

bool Scenario::reshard_after_forward() const {
  if (parallelism.reshard_after_forward) return *parallelism.reshard_after_forward;
  // torchtitan's fsdp_reshard_after_forward "default": "For PP, by default do not reshard after
  // forward to avoid per-microbatch all-gathers" (reshard_after_forward = not pp_enabled).
  if (framework == Framework::kTorchtitan) return parallelism.pp == 1;
  return true;
}

AttentionKernel Scenario::attention_kernel() const {
  if (model.attention != AttentionKernel::kAuto) return model.attention;
  switch (framework) {
    case Framework::kMegatronLm:
    case Framework::kNemo:
      // --transformer-impl defaults to transformer_engine (megatron/training/arguments.py), whose
      // DotProductAttention runs a flash or cuDNN fused kernel.
    case Framework::kTorchtitan:
      // F.scaled_dot_product_attention (torchtitan's Llama attention), a flash or cuDNN fused kernel.
      return AttentionKernel::kFused;
    case Framework::kGeneric:
    case Framework::kDeepSpeed:
    case Framework::kMegatronDeepSpeed:
      // From the model: Megatron's unfused CoreAttention for GPT-style models with learned positions
      // (Korthikanti et al. 2022, Table 2; Megatron-DeepSpeed's --use-flash-attn is off unless given), a
      // fused kernel for RoPE models.
      break;
  }
  return model.position_embedding == PositionEmbedding::kLearned ? AttentionKernel::kUnfused
                                                                 : AttentionKernel::kFused;
}

Scenario::OptimizerPasses Scenario::optimizer_passes() const {
  const bool mixed = dtype_bytes(storage_dtype(training.dtype)) < 4;
  const bool fp16 = training.dtype == Dtype::kFp16;
  switch (framework) {
    case Framework::kMegatronLm:
    case Framework::kNemo:
    case Framework::kDeepSpeed:
    case Framework::kMegatronDeepSpeed:
      // Megatron's MixedPrecisionOptimizer.step (megatron/core/optimizer/optimizer.py): the model
      // gradients copied into fp32 main gradients (.float(), a no-op when they accumulate in fp32),
      // unscaled and checked for inf under fp16's grad scaler, their norm for --clip-grad (default
      // 1.0; the scaling itself only when the norm exceeds it), the fused Adam update, then the fp32
      // main parameters copied into the model's (_copy_main_params_to_model_params). ZeRO's optimizers
      // make the same passes over their fp32 partitions: the gradient converted to fp32, its norm
      // always computed (overflow check, logging), unscaled in unscale_and_clip_grads, the update, the
      // fp32 partition copied into the 16-bit one (deepspeed/runtime/zero/stage_1_and_2.py, step).
      return {.fp32_main_grads = mixed,
              .unscale = fp16,
              .grad_norm = true,
              .clip = false,
              .copy_to_model = mixed};
    case Framework::kTorchtitan:
      // clip_grad_norm_ with training.max_norm 1.0: a foreach norm over the gradients, then every
      // gradient multiplied by the clamped coefficient (torch.nn.utils.clip_grad_norm_, which scales
      // unconditionally to avoid a host synchronisation); the fused AdamW updates FSDP2's fp32 shards,
      // which are the weights.
      return {.fp32_main_grads = false,
              .unscale = false,
              .grad_norm = true,
              .clip = true,
              .copy_to_model = false};
    case Framework::kGeneric:
      break;
  }
  return {};
}

bool Scenario::master_weight_shards() const {
  // FSDP2 keeps the sharded parameters in their original fp32 and casts them to MixedPrecisionPolicy's
  // param_dtype for each all-gather; the optimizer steps on those shards (_fsdp_api.py).
  return framework == Framework::kTorchtitan && parallelism.zero_stage == 3 &&
         dtype_bytes(storage_dtype(training.dtype)) < 4;
}

}  // namespace trainsim::config
