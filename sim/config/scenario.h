// Typed scenario: model, training setup, parallel plan and cluster. Produced by
// `load_scenario` (sim/config/loader.h) with every default filled in, every preset expanded and every
// cross-field rule checked; consumers never see a half-valid scenario.
#ifndef TRAINSIM_SIM_CONFIG_SCENARIO_H_
#define TRAINSIM_SIM_CONFIG_SCENARIO_H_

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sim/config/hardware.h"
#include "sim/config/topology.h"
#include "sim/config/types.h"

namespace trainsim::config {

// Mixture of experts (Shazeer et al. 2017; GShard; Switch): each MoE layer replaces the dense MLP
// by `experts` MLPs of `expert_ffn_hidden` and a router that sends every token to `top_k` of them,
// plus `shared_experts` that every token passes through (DeepSeek-MoE, Qwen-MoE).
struct Moe {
  int64_t experts = 0;            // routed experts per MoE layer; 0: a dense model
  int64_t top_k = 1;              // experts each token is routed to
  int64_t expert_ffn_hidden = 0;  // intermediate size of one expert (per branch for SwiGLU)
  int64_t shared_experts = 0;     // always-active experts of expert_ffn_hidden each
  // Tokens every expert's buffers, GEMMs and all-to-all shares are sized for, relative to a
  // perfectly balanced router (>= 1): a GShard/Switch capacity factor (tokens beyond it dropped,
  // buffers padded), or, for dropless routing, the load of the busiest rank of an expert-parallel
  // group relative to the mean (the all-to-alls make every rank wait for it; with ep 1 every rank
  // holds every expert and dropless routing has no imbalance to pay: use 1).
  double capacity_factor = 1.0;
  int64_t dense_layers = 0;  // the first layers keep a dense MLP of ffn_hidden (first_k_dense_replace)

  bool enabled() const { return experts > 0; }
};

// Multi-head latent attention (DeepSeek-V2, arXiv 2405.04434; Megatron-Core MLASelfAttention):
// keys and values are projected down to one `kv_lora_rank` latent per token (plus one shared
// rotary key of `rope_head_dim`), normalised, then projected up to every head; queries likewise
// through `q_lora_rank` when it is set, or straight from the hidden state. Each query/key head has
// head_dim + rope_head_dim dimensions, each value head v_head_dim.
struct Mla {
  int64_t kv_lora_rank = 0;   // 0: standard attention
  int64_t q_lora_rank = 0;    // 0: queries projected directly (DeepSeek-V2-Lite)
  int64_t rope_head_dim = 0;  // rotary part of every query/key head (qk_rope_head_dim)
  int64_t v_head_dim = 0;     // value head size (default head_dim)

  bool enabled() const { return kv_lora_rank > 0; }
};

// Transformer shape. All counts are exact; `seq_len` is in tokens.
struct Model {
  std::string preset;  // the preset it was expanded from, empty when fully explicit
  int64_t layers = 0;
  int64_t hidden = 0;
  int64_t heads = 0;
  int64_t kv_heads = 0;    // == heads for multi-head attention, fewer for GQA
  int64_t head_dim = 0;    // usually hidden / heads; with MLA the non-rotary query/key part
  int64_t ffn_hidden = 0;  // intermediate size of the MLP (per branch for SwiGLU)
  int64_t vocab = 0;
  int64_t seq_len = 0;
  Activation activation = Activation::kGelu;
  Norm norm = Norm::kLayerNorm;
  PositionEmbedding position_embedding = PositionEmbedding::kLearned;
  bool tied_embeddings = true;  // input embedding and LM head share one matrix
  bool linear_bias = true;      // QKV, projection and MLP GEMMs carry a bias
  // The attention kernel; never kAuto in a scenario that load_scenario returned
  // (Scenario::attention_kernel resolves it).
  AttentionKernel attention = AttentionKernel::kAuto;
  Moe moe;
  Mla mla;

  bool moe_layer(int64_t layer) const { return moe.enabled() && layer >= moe.dense_layers; }
  // Sizes of the attention heads: query/key (with MLA's rotary part) and value.
  int64_t qk_head_dim() const { return head_dim + mla.rope_head_dim; }
  int64_t value_head_dim() const { return mla.enabled() ? mla.v_head_dim : head_dim; }
};

struct Training {
  int64_t global_batch = 0;  // sequences per iteration, all data-parallel replicas together
  int64_t micro_batch = 1;   // sequences per micro-batch per replica
  Dtype dtype = Dtype::kBf16;
  Optimizer optimizer = Optimizer::kAdam;
  // What gradients are accumulated and reduced across data-parallel ranks in (fp32, bf16 or fp16):
  // Megatron-LM's main gradients (accumulate_allreduce_grads_in_fp32, forced for bf16; NeMo and
  // Megatron-Bridge's grad_reduce_in_fp32), FSDP's reduce_dtype. Unset: the framework's default
  // (Scenario::gradient_dtype).
  std::optional<Dtype> grad_dtype;
  // The fraction of HBM a plan must leave free for what the memory model does not count: PyTorch's
  // caching allocator (which every framework modelled here allocates through) cannot hand out the
  // free parts of its segments that are too small or split for the next request, and workspaces grow.
  // 5 %: an 80 GB H100 ran out of memory with 1.83 GiB reserved but unallocated (2.3 % of its HBM) at
  // 75.3 GiB allocated, and that project now reserves 5 % (vllm-project/compressed-tensors PR 587,
  // 2026); fragmentation can reach 30 % in extreme cases (Rajbhandari et al. 2020, ZeRO, section 3.2).
  // 0 with `expandable_segments:True` and a measured peak.
  double memory_headroom = 0.05;
  // FP8 training only: the linear layers' weights are kept in FP8 alone, with their transposes, and
  // the distributed optimizer writes and all-gathers them in FP8 (Megatron-Core's fp8_param_gather,
  // Transformer Engine's FP8 primary weights; set by NeMo's and Megatron-Bridge's FP8 recipes), instead
  // of bf16 weights with FP8 copies cast from them every iteration.
  bool fp8_params = false;
};

// FPDT computes the loss in pieces of chunk_tokens / sp / kFpdtLossPieces tokens per GPU (DeepSpeed's
// FPDT_LogitsLoss, seed-papers.md A2).
inline constexpr int64_t kFpdtLossPieces = 32;

struct Fpdt {
  int64_t chunk_tokens = 65536;  // global chunk length after the all-to-all (DeepSpeed's chunk_size)
  bool offload = true;           // K/V and activations to pinned host memory
  bool host_sync = true;         // reproduce DeepSpeed's host synchronize() after every block
};

struct Parallelism {
  int64_t tp = 1;
  int64_t pp = 1;
  int64_t dp = 1;   // derived from cluster.gpus when the file omits it
  int64_t sp = 1;   // Ulysses / ring / FPDT degree; 1 for none and megatron
  int64_t vpp = 1;  // model chunks per pipeline stage (interleaved schedule)
  // Expert parallelism: the experts of each MoE layer are spread over `ep` ranks, which exchange
  // tokens by all-to-all; expert gradients are reduced over the ranks that hold the same experts.
  // Each expert is split over `expert_tp` ranks (Megatron-Core's expert tensor parallelism, a
  // divisor of tp; 0: tp). The other tp / expert_tp tensor-parallel ranks fold into the expert
  // groups, innermost (MoE parallel folding): ep spans them first, then data-parallel ranks, so ep
  // divides (tp / expert_tp) x dp.
  int64_t ep = 1;
  int64_t expert_tp = 0;
  int64_t expert_tp_degree() const { return expert_tp > 0 ? expert_tp : tp; }
  Schedule schedule = Schedule::kOneFOneB;
  SequenceParallel sequence_parallel = SequenceParallel::kNone;
  CpComm cp_comm = CpComm::kP2p;  // with sequence_parallel: ring
  Fpdt fpdt;
  int zero_stage = 0;  // 0..3
  Recompute recompute = Recompute::kNone;
  bool cpu_checkpointing = false;  // checkpointed layer inputs kept in host memory
  // Rank order, innermost (fastest varying) first; a permutation of tp, sp, dp, pp.
  std::string order = "tp-sp-dp-pp";
  // Unset: the framework's default (Scenario::dp_bucket_bytes and the accessors beside it).
  std::optional<double> dp_bucket_bytes;    // gradient reduction bucket size
  std::optional<bool> overlap_grad_reduce;  // DP reduction overlaps backward
  // The interleaved schedule posts each step's receive as soon as the previous step of the same pass
  // (forward or backward) has run, so that the transfer proceeds under the other pass's compute
  // (Megatron-Core's overlap_p2p_comm); otherwise after the step just before it, whichever its pass.
  std::optional<bool> overlap_p2p_comm;
  // Each MoE layer's forward holds the host until the router's token counts have reached it, before
  // the token all-to-all is issued (a dropless dispatcher needs the split sizes on the host).
  std::optional<bool> moe_host_sync;
  // The host synchronises the device before each micro-batch's forward, waiting for every stream's
  // work, pipeline messages included, before it issues the forward's first kernel.
  std::optional<bool> micro_batch_sync;
  // ZeRO-3 / FSDP: free the gathered parameters after each forward use and gather them again for the
  // backward (FSDP's reshard_after_forward, DeepSpeed stage 3's release after each module), or keep
  // them from the forward to the backward.
  std::optional<bool> reshard_after_forward;
  // ZeRO-3: the most parameter bytes one all-gather collects: a unit's parameter tensors, in the order
  // of use, are coalesced into a call until it holds this many (DeepSpeed's prefetch bucket).
  std::optional<double> zero3_gather_bucket_bytes;
  // ZeRO-3: parameter tensors of fewer elements stay whole on every rank, never gathered (DeepSpeed's
  // stage3_param_persistence_threshold).
  std::optional<int64_t> zero3_persistence_threshold;
  // Tensor-parallel collectives overlap the GEMMs that consume or produce them (Transformer Engine's
  // userbuffers, `--tp-comm-overlap`; needs Megatron sequence parallelism when tp > 1).
  bool tp_comm_overlap = false;
  // In the backward of a column-parallel GEMM (QKV, FC1), the reduction of its input gradient over the
  // TP group (all-reduce; reduce-scatter under Megatron SP) runs while its weight gradient computes:
  // Megatron-LM's async_tensor_model_parallel_allreduce (megatron/core/tensor_parallel/layers.py,
  // LinearWithGradAccumulationAndAsyncCommunication; on by default since its introduction in 2021-22).
  // false: the reduction starts after the weight gradient, as in Megatron-LM before that path, whose
  // ColumnParallelLinear wraps F.linear in copy_to_tensor_model_parallel_region, so autograd computes
  // both gradients of the GEMM and then all-reduces (the stack of Narayanan et al. 2021).
  bool async_tp_reduce = true;
  // Expert all-to-alls hidden under another micro-batch's compute (Megatron-Core's
  // overlap_moe_expert_parallel_comm, Megatron-Bridge's moe_a2a_overlap): the steady state of 1F1B
  // runs each forward and the backward after it, of different micro-batches, as one overlapped pair
  // (workload/pipeline_schedule.h). Only where ep_comm_overlap_blocker() is kNone.
  bool ep_comm_overlap = false;
  // What keeps Megatron-Core from running this plan with ep_comm_overlap (the checks of its
  // TransformerConfig, the first that fails), or kNone.
  enum class EpOverlapBlocker { kNone, kNoExpertParallelism, kSchedule, kFullRecompute };
  EpOverlapBlocker ep_comm_overlap_blocker() const {
    if (ep == 1) return EpOverlapBlocker::kNoExpertParallelism;
    if (schedule != Schedule::kInterleaved && (pp > 1 || schedule != Schedule::kOneFOneB)) {
      return EpOverlapBlocker::kSchedule;
    }
    return recompute == Recompute::kFull ? EpOverlapBlocker::kFullRecompute : EpOverlapBlocker::kNone;
  }
  // Allow a layer count that pp·vpp does not divide: stages then differ by one layer, the shorter
  // ones being the last, the first, the second-to-last, ... (as Llama 3 405B's 126 layers on 16).
  bool uneven_stages = false;
  // Layers of the first and of the last pipeline stage, the others sharing the rest evenly
  // (Megatron-Core's num_layers_in_first_pipeline_stage and num_layers_in_last_pipeline_stage,
  // --decoder-first-pipeline-num-layers); 0: the split above.
  int64_t first_stage_layers = 0;
  int64_t last_stage_layers = 0;
};

// The data center the cluster runs in (cluster.facility): what cooling and power delivery add to the
// IT load, and what electricity costs.
struct Facility {
  double pue = 1;  // power usage effectiveness: facility power / IT power (1: the IT load alone)
  std::optional<double> electricity_usd_per_kwh;
};

struct Cluster {
  std::filesystem::path topology_path;  // as resolved (absolute, normalised)
  std::filesystem::path hardware_path;
  int64_t gpus = 0;
  Topology topology;         // the loaded file
  HardwareProfile hardware;  // the loaded file, with the price below applied
  // The scenario's own price per GPU-hour (cluster.cost.price_per_gpu_hour: a negotiated or
  // reserved rate), which replaces the profile's in hardware.cost; nullopt: the profile's, if any.
  std::optional<double> price_per_gpu_hour_usd;
  Facility facility;
};

// GPUs slower than the hardware profile (stragglers: power capping, thermal throttling, a degraded
// part). A GPU's kernels (GEMMs, attention, memory passes, the optimizer) take 1/speed as long;
// copies, communication and host work are unchanged. Its speed is its draw from the spread (1 when
// spread_stddev is 0) times the speed of the slow_gpus entry that names it.
struct SlowGpus {
  std::vector<int64_t> ranks;  // global ranks, each on GPU `rank` of the cluster
  std::vector<int64_t> nodes;  // every GPU of these nodes (node = rank / GPUs per node)
  double speed = 1;            // fraction of the profile's kernel rates, in (0, 1]
};

// Nodes whose NICs run below the topology's bandwidth (a port that trained down to a lower speed, a
// bad cable): every NIC of each node carries `bandwidth_bytes_per_s` per direction instead.
struct SlowNics {
  std::vector<int64_t> nodes;
  double bandwidth_bytes_per_s = 0;  // below the topology's NIC bandwidth
};

struct Stragglers {
  std::vector<SlowGpus> slow_gpus;  // no GPU is named twice
  std::vector<SlowNics> slow_nics;  // no node is named twice
  // Every GPU's own speed, normal around 1 with this standard deviation and truncated at 3 of them
  // (GPUs of one model differ by manufacturing and power management); 0 for none.
  double spread_stddev = 0;
  uint64_t seed = 1;  // the draws are a function of (seed, rank) alone

  bool slows_gpus() const { return !slow_gpus.empty() || spread_stddev > 0; }
  // Per node of slow_nics: its NICs' bandwidth, bytes/s per NIC and direction.
  std::map<int64_t, double> nic_bandwidth_by_node() const {
    std::map<int64_t, double> out;
    for (const SlowNics& entry : slow_nics) {
      for (const int64_t node : entry.nodes) out[node] = entry.bandwidth_bytes_per_s;
    }
    return out;
  }
  bool any() const { return slows_gpus() || !slow_nics.empty(); }
};

// Checkpoints of the model state (weights in the training dtype and the optimizer state, one copy:
// what a restart loads), every GPU writing its share to shared storage at once.
struct Checkpoints {
  double write_bandwidth_bytes_per_s = 0;  // the storage's sustained write bandwidth, all nodes together
  // false: training waits for the write. true: training pauses only while each GPU copies its share
  // to pinned host memory; the write runs in the background and a checkpoint counts once written.
  bool async = false;
  double interval_s = 0;  // training time between checkpoints; 0 = the optimum for the interruptions
};

// Interruptions of the job: any failed GPU, host, link or switch stops synchronous training, which
// restarts from the last checkpoint. They arrive as a Poisson process.
struct Interruptions {
  double mtbi_per_gpu_s = 0;  // mean time between interruptions per GPU; the job's is this / GPUs
  double restart_s = 0;       // from an interruption to training again (detect, reschedule, load)
};

// The whole training run (the optional `campaign` section): the tokens to train on, and what
// checkpoints and interruptions add to the time it takes.
struct Campaign {
  double tokens = 0;  // 0: no campaign
  std::optional<Checkpoints> checkpoints;
  std::optional<Interruptions> interruptions;  // only with checkpoints
};

struct Scenario {
  std::filesystem::path path;  // the file it was loaded from (absolute, normalised)
  std::string name;
  std::string description;
  std::string content_hash;  // of the file (and what it extends), for provenance; --set not included
  Framework framework = Framework::kGeneric;
  Model model;
  Training training;
  Parallelism parallelism;
  Cluster cluster;
  Stragglers stragglers;
  Campaign campaign;

  // Micro-batches per iteration and data-parallel replica: global_batch / (micro_batch * dp).
  int64_t micro_batches() const { return training.global_batch / (training.micro_batch * parallelism.dp); }
  // FPDT chunks per sequence (u in the paper): seq_len / chunk_tokens; 1 when FPDT is off.
  int64_t fpdt_chunks() const;
  // The HBM a rank's peak must stay within: the GPU's capacity less training.memory_headroom.
  double usable_hbm_bytes() const;
  // The keys a framework supplies when the scenario leaves them out (sim/config/framework.cc cites
  // each default): the gradient dtype, the data-parallel bucket in bytes (+infinity: one bucket per
  // model chunk), whether its reduction overlaps the backward, and FSDP's resharding after forward.
  Dtype gradient_dtype() const;
  double dp_bucket_bytes() const;
  bool overlap_grad_reduce() const;
  bool overlap_p2p_comm() const;
  bool moe_host_sync() const;
  bool micro_batch_sync() const;
  bool reshard_after_forward() const;
  // ZeRO-3's collective granularity. zero3_gather_bucket_bytes: the most parameter bytes one all-gather
  // collects (+infinity: a whole unit per all-gather, as FSDP's fully_shard units); the tensors too
  // small to be sharded (zero3_persistence_threshold elements; 0: none). Whether a unit's
  // gradients join a reduction bucket of dp_bucket_bytes() (DeepSpeed stage 3's ipg bucket) rather than
  // being reduce-scattered on their own (FSDP's post-backward per unit).
  double zero3_gather_bucket_bytes() const;
  int64_t zero3_persistence_threshold() const;
  bool zero3_bucketed_reduce() const;
  // The attention kernel: model.attention, or for auto the framework's (never the parallel plan's, so
  // that plans are compared on one kernel).
  AttentionKernel attention_kernel() const;
  // Whether ZeRO-3's weight shards are the fp32 master weights rather than a training-dtype copy beside
  // them: FSDP2 (torchtitan) in mixed precision.
  bool master_weight_shards() const;
  // The passes over the gradients and weights a framework's optimizer step makes besides the update
  // itself (sim/config/framework.cc cites each; all false: one fused pass, the generic step).
  struct OptimizerPasses {
    bool fp32_main_grads = false;  // the update reads fp32 gradients, copied from lower ones first
    bool unscale = false;          // fp16 loss scaling: the gradients unscaled and checked in place
    bool grad_norm = false;        // the gradients' norm read for clipping
    bool clip = false;             // every gradient multiplied by the clipping coefficient
    bool copy_to_model = false;    // the fp32 master weights copied into the training-dtype weights
  };
  OptimizerPasses optimizer_passes() const;
  // Whether a plan whose fullest rank peaks at `peak_hbm_bytes` and whose busiest node holds
  // `peak_host_bytes_per_node` of host memory fits: within the usable HBM and the node's host memory.
  bool memory_fits(double peak_hbm_bytes, double peak_host_bytes_per_node) const;
};

}  // namespace trainsim::config

#endif  // TRAINSIM_SIM_CONFIG_SCENARIO_H_
