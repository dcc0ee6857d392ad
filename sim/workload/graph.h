// The operation graph of one rank for one training iteration: a flat vector of ops plus, per op,
// the ops it depends on (CSR). This is the contract between the workload builder and the engine.
//
// Ordering contract. Every ordering constraint is an explicit dependency, including the FIFO order
// of a CUDA stream: the builder makes each op depend on the previous op of its stream, except on
// Stream::kP2p (grouped NCCL send/receive, which start together). The engine therefore needs no
// ordering of its own: an op may start once all its predecessors have finished. `stream` tells which
// hardware queue the op occupies (and so which ops may overlap); ops of one stream never overlap.
// Predecessors always have smaller ids than the op, so op-vector order is a topological order and
// the graph is acyclic by construction. Op order is also the order in which the framework issues
// the ops from the host, so it is the order the caching allocator sees allocations and frees.
//
// Matching contract. A collective names its process group (kind + index; see plan.h for members)
// and a per-group sequence number: the k-th collective a rank issues on a group matches the k-th
// collective of every other member. A send names the receiving rank and a tag; the receiver's
// matching kRecv names the sender and carries the same tag.
#ifndef TRAINSIM_SIM_WORKLOAD_GRAPH_H_
#define TRAINSIM_SIM_WORKLOAD_GRAPH_H_

#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sim/config/types.h"
#include "sim/workload/plan.h"

namespace trainsim::workload {

using OpId = uint32_t;
inline constexpr OpId kNoOp = std::numeric_limits<OpId>::max();
using BufferId = int32_t;

enum class OpKind : uint8_t {
  kGemm,               // dense matmul, `gemm` shape
  kAttentionForward,   // one attention kernel (block), `attention` shape
  kAttentionBackward,  // its backward
  kMemory,             // memory-bound kernel (norm, activation, RoPE, merge, ...): cost is `bytes`
  kOptimizerStep,      // optimizer update of this rank's shard: memory-bound, `bytes`
  kCollective,         // `collective`; `bytes` is the message size m (see CollectiveKind)
  kSend,               // `p2p`; `bytes` is the message size
  kRecv,               // `p2p`; `bytes` is the message size
  kCopy,               // host<->device copy over PCIe, `copy`; `bytes` copied
  kHostSync,           // host waits for streams (cudaStreamSynchronize): launch/sync latency only
  kStreamWait,         // a stream waits for other streams (cudaStreamWaitEvent): orders, costs nothing
  kAlloc,              // allocation of `buffer`; `bytes` its size
  kFree,               // release of `buffer`; `bytes` its size
};

// Hardware queues of one GPU (see the ordering contract above).
enum class Stream : uint8_t {
  kCompute,  // the default stream: kernels, and synchronous host copies
  kComm,     // NCCL collectives of the tensor/sequence/context-parallel groups (blocking for compute)
  kP2p,      // NCCL send/receive (pipeline and ring attention); not FIFO-ordered, see above
  kDpComm,   // NCCL collectives of data parallelism and ZeRO (overlap with compute)
  kCopy,     // copy queue 1 (DeepSpeed FPDT `offload_stream`: q/k/v, dq, o/lse/dO fetches)
  kCopyAux,  // copy queue 2 (DeepSpeed FPDT `general_offload_stream`: x, o, lse offloads)
  // The second lane of an overlapped forward-backward pair (DualPipe): the backward's kernels and
  // its blocking collectives, as kCompute and kComm hold the forward's. Kernels of kCompute and
  // kCompute2 share the GPU: they never run at once, so either pass computes while the other
  // communicates.
  kCompute2,
  kComm2,
};
inline constexpr int kStreamCount = 8;
// Whether `stream` holds kernels (either lane of the GPU).
constexpr bool compute_stream(Stream stream) {
  return stream == Stream::kCompute || stream == Stream::kCompute2;
}

// Whether ops of `kind` run as kernels on the GPU's SMs (they take the GPU in turn when a graph has
// two lanes, and run slower while a collective of their rank is in flight).
constexpr bool is_kernel(OpKind kind) {
  return kind == OpKind::kGemm || kind == OpKind::kAttentionForward || kind == OpKind::kAttentionBackward ||
         kind == OpKind::kMemory || kind == OpKind::kOptimizerStep;
}

enum class Phase : uint8_t {
  kSetup,  // persistent model state comes into existence
  kForward,
  kBackward,
  kRecompute,  // forward work repeated in backward (activation recomputation)
  kOptimizer,  // gradient synchronisation after backward, the step, parameter all-gather
  kTeardown,   // persistent model state released (keeps every graph self-contained)
};

// Bytes semantics (the DeepSpeed comms-logger / nccl-tests "size"): all-reduce: the buffer;
// all-gather: the gathered output (group size x shard); reduce-scatter: the full input;
// all-to-all: this rank's buffer (input size == output size); barrier: the 1-element all-reduce.
enum class CollectiveKind : uint8_t { kAllReduce, kAllGather, kReduceScatter, kAllToAll, kBarrier };
// The hardware-profile schema's name of a collective (its measured tables and calibration cases).
config::CollectiveKind profile_kind(CollectiveKind kind);
enum class CopyDirection : uint8_t { kHostToDevice, kDeviceToHost };
enum class MemorySpace : uint8_t { kHbm, kHost };
enum class MemoryCategory : uint8_t {
  kWeights,      // resident parameters (ZeRO-3: this rank's shard)
  kGradients,    // gradient buffers
  kOptimizer,    // optimizer states (fp32 master weights, moments)
  kActivations,  // tensors kept for backward, layer inputs/outputs, host copies of them
  kBuffers,      // transient working sets: workspaces, gathered ZeRO-3 parameters, communication
                 // buffers, FPDT chunk buffers
  kRuntime,      // held by the software stack for the whole run: CUDA context, NCCL buffers
};
inline constexpr int kMemoryCategoryCount = 6;

// What an op computes or moves; with phase, layer and micro-batch it names the op.
enum class OpLabel : uint8_t {
  kModelState,
  kEmbedding,
  kNorm,
  kQkv,
  kRope,
  kAttention,
  kAttentionMerge,
  kProjection,
  kResidual,
  kFc1,
  kActivation,
  kFc2,
  kFinalNorm,
  kLmHead,
  kLoss,
  kGradAccumulate,
  kTpComm,
  kSpComm,
  kCpComm,
  kPpComm,
  kGradSync,
  kParamGather,
  kEmbeddingGradSync,
  kLossComm,
  kBarrier,
  kOffload,
  kFetch,
  kHostSync,
  kOptimizerStep,
  kActivationStash,
  kWorkspace,
  kLayerInput,
  kGatheredParams,
  kChunkBuffer,
  kCheckpoint,
  kLogits,
  kCommBuffer,
  kRuntime,
  kWeightGradOperands,  // GEMM inputs and output gradients a split backward keeps for its W pass
  kRouter,              // MoE router: gate GEMM, softmax and top-k
  kPermute,             // MoE token permutation (gather by expert) and its inverse with the weighted sum
  kExpertFc1,
  kExpertFc2,
  kEpComm,    // MoE token all-to-alls of the expert-parallel group
  kLatent,    // MLA down projections of the queries and keys/values (the up projections are kQkv)
  kStepSync,  // the framework's device synchronisation at a micro-batch boundary
};

enum class GemmPass : uint8_t { kForward, kInputGrad, kWeightGrad };

// C[m x n] = A[m x k] * B[k x n]; `groups` such products in one kernel (a grouped GEMM, one
// product per local expert).
struct GemmShape {
  int64_t m, n, k;
  GemmPass pass;
  int32_t groups = 1;
};

struct AttentionShape {
  int32_t batch, heads, kv_heads, q_len, kv_len;  // heads: query heads; kv_heads: K/V heads (GQA)
  int32_t head_dim;                               // of the queries and keys
  int32_t value_dim;                              // of the values and the output (MLA: not head_dim)
  bool causal;                                    // causal mask (diagonal block)
  bool fused;            // flash-style kernel (scores never materialised) vs unfused softmax(QK^T)V
  bool dropout = false;  // attention dropout on the probabilities (unfused kernel only)
};

// The batched GEMMs of an unfused attention kernel (Megatron's CoreAttention: baddbmm then bmm), each
// over the rows b·heads·q_len of the score matrix: QKᵀ (rows x kv_len x head_dim) and PV
// (rows x kv_len x value_dim). Its backward runs each twice.
struct UnfusedAttentionGemms {
  GemmShape scores, values;
};
UnfusedAttentionGemms unfused_attention_gemms(const AttentionShape& attention);

struct CollectiveCall {
  CollectiveKind kind;
  GroupId group;
  int32_t seq;  // per-group sequence number on this rank, from 0
};

struct P2pCall {
  int32_t peer;  // the other rank
  int64_t tag;   // equal on the matching send and receive
};

struct CopyCall {
  CopyDirection direction;
};

struct BufferCall {
  BufferId buffer;
  MemorySpace space;
  MemoryCategory category;
};

struct Op {
  Op() : gemm{} {}

  OpKind kind = OpKind::kMemory;
  Stream stream = Stream::kCompute;
  Phase phase = Phase::kForward;
  OpLabel label = OpLabel::kNorm;
  config::Dtype dtype = config::Dtype::kBf16;
  int32_t layer = -1;        // global transformer layer, -1 when not in a layer
  int32_t micro_batch = -1;  // -1 when not per micro-batch
  int32_t index = -1;        // chunk, ring step, bucket or block index where meaningful
  double flops = 0;          // floating-point operations the kernel executes
  // Contribution to the model-FLOPs convention of Narayanan/Korthikanti: dense matmuls, attention
  // counted as non-causal (its per-layer total spread evenly over the blocks launched), backward
  // twice the forward. For kRecompute ops it is the forward value (hardware FLOPs count them).
  double model_flops = 0;
  // kGemm/kAttention*/kMemory/kOptimizerStep: HBM bytes read + written; kCollective/kSend/kRecv:
  // message bytes; kCopy: bytes copied; kAlloc/kFree: buffer size. 0 for kHostSync.
  double bytes = 0;
  union {
    GemmShape gemm;
    AttentionShape attention;
    CollectiveCall collective;
    P2pCall p2p;
    CopyCall copy;
    BufferCall buffer;
  };
};

// Which rank the graph is for and how it relates to the plan.
struct GraphInfo {
  int64_t rank = 0;
  Coords coords;
  int32_t symmetry_class = 0;
  int64_t micro_batches = 0;  // per iteration and data-parallel replica
  int64_t buffers = 0;        // buffer ids are 0..buffers-1
};

class Graph {
 public:
  // A new graph starts with the storage of the largest graph destroyed on its thread, cleared: a
  // search or an estimate builds thousands of graphs one after another, and a large one's storage,
  // returned to the system when freed, had every page faulted in again by the next (a third of the
  // time of an FPDT estimate, whose graphs hold millions of ops). One such storage is kept per thread.
  Graph();
  ~Graph();
  Graph(const Graph&) = default;
  Graph(Graph&&) noexcept = default;
  Graph& operator=(const Graph&) = default;
  Graph& operator=(Graph&&) noexcept = default;

  GraphInfo info;

  // Appends `op` with the given predecessors (each must be an existing op id; duplicates are
  // removed) and returns its id. Aborts on a predecessor that does not exist yet.
  OpId add(const Op& op, std::span<const OpId> predecessors);

  // Sets the size of allocation `id`, for one whose size depends on ops appended after it (the
  // runtime memory of the communicators a rank uses). Aborts unless `id` is an allocation.
  void resize_allocation(OpId id, double bytes);

  size_t size() const { return ops_.size(); }
  const Op& op(OpId id) const { return ops_[id]; }
  const std::vector<Op>& ops() const { return ops_; }
  std::span<const OpId> predecessors(OpId id) const;
  size_t edge_count() const { return preds_.size(); }

  // Successor lists in CSR form (offsets has size()+1 entries), computed in O(ops + edges).
  struct Successors {
    std::vector<uint32_t> offsets;
    std::vector<OpId> ids;
    std::span<const OpId> of(OpId id) const {
      return {ids.data() + offsets[id], ids.data() + offsets[id + 1]};
    }
  };
  Successors successors() const;

  void reserve(size_t ops, size_t edges);

 private:
  std::vector<Op> ops_;
  std::vector<uint32_t> pred_offsets_;
  std::vector<OpId> preds_;
};

std::string_view to_string(OpKind kind);
std::string_view to_string(Stream stream);
std::string_view to_string(Phase phase);
std::string_view to_string(CollectiveKind kind);
std::string_view to_string(CopyDirection direction);
std::string_view to_string(MemorySpace space);
std::string_view to_string(MemoryCategory category);
std::string_view to_string(OpLabel label);
// GEMMs of the transformer's linear layers (Transformer Engine modules in Megatron-Core): the ones
// fp8 training runs in fp8. The LM head, the router and the attention core are not.
constexpr bool linear_layer(OpLabel label) {
  return label == OpLabel::kQkv || label == OpLabel::kProjection || label == OpLabel::kFc1 ||
         label == OpLabel::kFc2 || label == OpLabel::kExpertFc1 || label == OpLabel::kExpertFc2 ||
         label == OpLabel::kLatent;
}
std::string_view to_string(GemmPass pass);

// A readable name such as "fwd L3 mb2 fc1" or "bwd L0 mb1 attention[4]".
std::string op_name(const Op& op);

// Sums over a graph, by the conventions documented on Op.
struct FlopTotals {
  double executed = 0;  // Σ flops
  double model = 0;     // Σ model_flops over forward and backward ops
  double hardware = 0;  // Σ model_flops over forward, backward and recompute ops
};
FlopTotals flop_totals(const Graph& graph);

}  // namespace trainsim::workload

#endif  // TRAINSIM_SIM_WORKLOAD_GRAPH_H_
