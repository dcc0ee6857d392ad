// Internal to sim/workload: appends ops to a Graph, filling in what every emitter would otherwise
// repeat: the edge from the previous op of the same stream (none on Stream::kP2p), the current
// phase / layer / micro-batch, buffer bookkeeping for alloc/free, per-group collective sequence
// numbers, and FLOP/byte counts of GEMMs. Collectives on a group of one rank are skipped (NCCL and
// the frameworks skip them too) and return kNoOp; kNoOp is ignored wherever it is passed as a
// dependency.
#ifndef TRAINSIM_SIM_WORKLOAD_WRITER_H_
#define TRAINSIM_SIM_WORKLOAD_WRITER_H_

#include <array>
#include <cstdint>
#include <initializer_list>
#include <vector>

#include "sim/workload/graph.h"
#include "sim/workload/plan.h"

namespace trainsim::workload {

// Kinds of point-to-point exchange; part of the tag so that equal (peer, tag) pairs never collide.
enum class P2pKind : uint8_t {
  kPipelineActivation = 1,
  kPipelineGradient,
  kRingForward,
  kRingRecompute,
  kRingBackward,
};

// Tag of a point-to-point message, equal on both sides: kind, micro-batch, layer or virtual stage,
// and step. Aborts when a field overflows its bits (24 for micro_batch, 16 for the others).
int64_t p2p_tag(P2pKind kind, int64_t micro_batch, int64_t where, int64_t step);

class GraphWriter {
 public:
  using Deps = std::initializer_list<OpId>;

  struct Position {
    Phase phase = Phase::kSetup;
    int32_t layer = -1;
    int32_t micro_batch = -1;
  };

  struct Allocation {
    BufferId buffer = -1;
    OpId op = kNoOp;
  };

  // `dtype`: the training dtype. Ops run in its storage dtype (config::storage_dtype), the linear
  // layers' GEMMs in it.
  GraphWriter(Graph& graph, const ParallelPlan& plan, int64_t rank, config::Dtype dtype);

  // Stamped on every op appended until changed.
  void set_position(Position position) { position_ = position; }
  // The lane ops go to until changed: 0, or 1 for the backward of an overlapped pair, whose
  // Stream::kCompute and Stream::kComm become Stream::kCompute2 and Stream::kComm2 (for every
  // stream argument and for last()).
  void set_lane(int lane) { lane_ = lane; }
  Position position() const { return position_; }

  // C[m x n] = A[m x k] B[k x n] in the training dtype: 2mnk FLOPs, e(mk + kn + mn) bytes.
  OpId gemm(OpLabel label, GemmPass pass, int64_t m, int64_t n, int64_t k, Deps deps = {},
            int32_t index = -1);
  // `groups` GEMMs of m x n x k in one kernel; `useful` is the fraction of the rows that carry
  // tokens (the rest pads expert capacity), which is all the model-FLOPs convention counts.
  OpId grouped_gemm(OpLabel label, GemmPass pass, int32_t groups, int64_t m, int64_t n, int64_t k,
                    double useful, Deps deps = {});
  // One attention kernel. Executed FLOPs: forward 4*b*heads*q*kv*d, halved when causal; backward
  // 2x that (2.5x for fused kernels, which recompute the scores). `model_flops` is the op's share of
  // the model-FLOPs convention (see Op), computed by the caller.
  OpId attention(bool backward, const AttentionShape& shape, double model_flops, Deps deps = {},
                 int32_t index = -1);
  // A memory-bound kernel on the compute stream moving `bytes` (read + written).
  OpId memory(OpLabel label, double bytes, Deps deps = {}, int32_t index = -1);
  OpId collective(OpLabel label, CollectiveKind kind, GroupKind group, double bytes, Stream stream,
                  Deps deps = {}, int32_t index = -1);
  OpId send(OpLabel label, int64_t peer, int64_t tag, double bytes, Deps deps = {}, int32_t index = -1);
  OpId recv(OpLabel label, int64_t peer, int64_t tag, double bytes, Deps deps = {}, int32_t index = -1);
  OpId copy(OpLabel label, CopyDirection direction, double bytes, Stream stream, Deps deps = {},
            int32_t index = -1);
  // The host blocks until `deps` (and the compute stream) are done; placed on the compute stream.
  // kHostSync labels the offload loops' synchronisations; another label names what the host waits
  // for (kRouter: a dropless MoE dispatcher's token counts).
  OpId host_sync(OpLabel label, Deps deps = {}, int32_t index = -1);
  // `stream` waits for `deps` without the host blocking (cudaStreamWaitEvent).
  OpId wait(Stream stream, Deps deps, int32_t index = -1);
  OpId optimizer_step(double params, double bytes_per_param, double flops_per_param, Deps deps = {});

  Allocation alloc(OpLabel label, MemoryCategory category, MemorySpace space, double bytes, Stream stream,
                   Deps deps = {}, int32_t index = -1);
  // Sets the size of a live allocation (its alloc op and the free to come) to `bytes`.
  void resize(Allocation allocation, double bytes);
  // Frees `buffer` on `stream` (the stream of its last user, so the free never delays other
  // streams, as PyTorch's caching allocator with record_stream behaves). Aborts on a double free.
  OpId release(BufferId buffer, Stream stream, Deps deps = {});
  double buffer_bytes(BufferId buffer) const { return buffers_[buffer].bytes; }

  // Last op appended on `stream` (in the current lane), kNoOp if none.
  OpId last(Stream stream) const { return last_[static_cast<int>(on_lane(stream))]; }
  // Every buffer freed (used by the builder's final check).
  bool all_released() const;
  int64_t buffer_count() const { return static_cast<int64_t>(buffers_.size()); }

 private:
  struct BufferState {
    double bytes;
    MemorySpace space;
    MemoryCategory category;
    OpLabel label;
    bool live;
  };

  Stream on_lane(Stream stream) const;
  OpId append(Op op, Deps deps, bool chain);
  Op make(OpKind kind, OpLabel label, Stream stream, int32_t index) const;
  Op gemm_op(OpLabel label, GemmPass pass, int32_t groups, int64_t m, int64_t n, int64_t k, double useful,
             int32_t index) const;

  Graph& graph_;
  const ParallelPlan& plan_;
  int64_t rank_;
  config::Dtype dtype_;         // of every op (config::storage_dtype of the training dtype)
  config::Dtype linear_dtype_;  // of the linear layers' GEMMs (the training dtype)
  int act_bytes_;
  Position position_;
  int lane_ = 0;
  std::array<OpId, kStreamCount> last_;
  std::array<int32_t, kGroupKindCount> seq_{};
  // Per group kind: its size, and the index of this rank's group once a collective asked (-1 before):
  // a graph issues thousands of collectives over a few groups.
  std::array<int64_t, kGroupKindCount> group_size_{};
  std::array<int32_t, kGroupKindCount> group_index_{};
  std::vector<BufferState> buffers_;
  std::vector<OpId> scratch_;
};

}  // namespace trainsim::workload

#endif  // TRAINSIM_SIM_WORKLOAD_WRITER_H_
