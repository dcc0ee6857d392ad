// The FPDT pipeline for one layer's attention on one GPU: the forward and backward loops of
// DeepSpeed's _FPDTGPUOffloadingAttentionImpl_ (seed-papers.md A4-A6), block for block and copy for
// copy, on the kernels of kernels/attention, so that the calibration harness times what the
// simulated cluster executes. With offload off it runs _FPDTGPUAttentionImpl_ (everything on the
// GPU, same compute order, no copies). tests/kernels/fpdt_loop_matches_workload_test.cc holds it to
// that: the copies and attention kernels it issues, in order, are the ops sim/workload/fpdt.cc prices.
//
// Streams (A6): compute (attention blocks, merges, casts, the chunk I/O), offload (q, k, v in the
// forward; q, out, lse, dout, dq, k, v in the backward) and general (out, lse in the forward).
// Prefetch is one step ahead. With FpdtSync::kHostSyncs the host synchronises where DeepSpeed does
// (after every attention block, before each chunk's offload, at the end); with kEvents the streams
// are ordered by events alone and forward()/backward() return without blocking. Either way, work
// enqueued on compute_stream() after forward() or backward() returns runs after all of theirs (the
// copy streams are joined back), so events on that stream time a whole pass.
//
// Deviations from DeepSpeed, all without effect on traffic or order: the backward kernel adds into
// the fp32 dq, dk, dv accumulators itself (DeepSpeed returns block gradients, then adds them); the
// output buffers and lse of consecutive chunks alternate between two device buffers (DeepSpeed's
// caching allocator gives fresh ones); with u = 1 chunk 0 is brought back for the backward after the
// output rather than inside the last block (there is no output of chunk 0 before); the layer input
// x, its offload and the QKV GEMMs stay with the caller's FpdtChunkIo.
#ifndef TRAINSIM_KERNELS_FPDT_PIPELINE_H_
#define TRAINSIM_KERNELS_FPDT_PIPELINE_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>

#include <cuda_runtime_api.h>

#include "kernels/attention/attention_launch.h"
#include "kernels/cuda/device_buffer.h"
#include "kernels/cuda/event.h"
#include "kernels/cuda/stream.h"
#include "kernels/data_type.h"
#include "kernels/fpdt/chunk_store.h"
#include "kernels/fpdt/fpdt_shape.h"

namespace trainsim::kernels {

enum class FpdtSync {
  kEvents,     // events order the streams; the host never blocks inside the loops
  kHostSyncs,  // DeepSpeed's wait_stream + stream.synchronize() points (A6)
};

struct FpdtOptions {
  bool offload = true;  // pinned host chunk stores (false: _FPDTGPUAttentionImpl_)
  FpdtSync sync = FpdtSync::kEvents;
  DataType dtype = DataType::kBFloat16;  // of q, k, v, out, dout and the gradients
  std::optional<double> softmax_scale;   // 1/sqrt(head_dim) when empty
  // The kernels of every attention block.
  AttentionKernel attention_kernel = AttentionKernel::kMmaSync;
};

// Where chunks come from and go to: in training the QKV projection and the Ulysses all-to-alls; in
// tests and the harness, copies (DeviceSequenceIo). Every call enqueues its work on `stream` and
// returns; the pipeline orders everything else after that work. Chunk tensors are dense
// [batch, chunk_tokens, heads or kv_heads, head_dim] in FpdtOptions::dtype, on the device.
class FpdtChunkIo {
 public:
  virtual ~FpdtChunkIo() = default;
  // Writes q, k, v of chunk `chunk`.
  virtual void produce_qkv(int64_t chunk, void* q, void* k, void* v, cudaStream_t stream) = 0;
  // Reads the attention output of chunk `chunk`; the buffer is reused once the work this call
  // enqueued on `stream` is done.
  virtual void consume_output(int64_t chunk, const void* out, cudaStream_t stream) = 0;
  // Writes the gradient of the output of chunk `chunk`.
  virtual void produce_grad_output(int64_t chunk, void* dout, cudaStream_t stream) = 0;
  // Reads dq, dk, dv of chunk `chunk` (complete); reused like consume_output's buffer.
  virtual void consume_grads(int64_t chunk, const void* dq, const void* dk, const void* dv,
                             cudaStream_t stream) = 0;
};

// Not thread-safe: one host thread drives an instance.
class FpdtAttention {
 public:
  // Allocates everything on the current device (and pinned host memory with offload), sized for
  // the shape. Throws std::invalid_argument for a shape or dtype the kernels do not support, or an
  // attention kernel the device cannot run (see attention_launch.h), GpuError when an allocation fails.
  FpdtAttention(const FpdtShape& shape, const FpdtOptions& options);
  FpdtAttention(const FpdtAttention&) = delete;
  FpdtAttention& operator=(const FpdtAttention&) = delete;

  // The forward loop (A4). Keeps q, k, v, out and lse of every chunk for backward().
  void forward(FpdtChunkIo& io);
  // The backward loop (A5). Throws std::logic_error unless forward() ran since the last backward().
  void backward(FpdtChunkIo& io);
  // Blocks until everything enqueued on the three streams is done.
  void synchronize() const;

  // The stream the chunk I/O and the first and last work of each loop run on (for timing events).
  cudaStream_t compute_stream() const { return compute_.get(); }
  size_t device_bytes() const { return device_bytes_; }
  size_t pinned_bytes() const { return pinned_bytes_; }

 private:
  // A device home for one k/v chunk (forward: the newest, the current and the prefetched chunk).
  struct KvSlot {
    DeviceBuffer<std::byte> k;
    DeviceBuffer<std::byte> v;
    int64_t chunk = -1;
    Event ready;     // the chunk's data is in place
    Event released;  // the compute stream is done reading it
  };
  // A device home for the query-side tensors of one query chunk (backward, double-buffered).
  struct QuerySlot {
    DeviceBuffer<std::byte> q;
    DeviceBuffer<std::byte> out;
    DeviceBuffer<std::byte> dout;
    DeviceBuffer<float> lse;
    DeviceBuffer<float> dq;
    int64_t chunk = -1;
    Event ready;
    Event computed;  // the attention block that accumulates into dq is done
    Event released;  // ... and its dq went back to the host
  };

  size_t q_chunk_bytes(int64_t chunk) const;
  size_t kv_chunk_bytes(int64_t chunk) const;
  size_t lse_chunk_bytes(int64_t chunk) const;
  void copy(void* dst, const void* src, size_t bytes, const Stream& stream) const;
  void host_sync();
  void join_copy_streams();
  KvSlot& slot_holding(int64_t chunk);
  KvSlot& free_slot(const KvSlot* keep_a, const KvSlot* keep_b);
  void prefetch_kv(int64_t chunk, KvSlot& slot);
  void prefetch_for_backward();
  void fetch_query_side(int64_t chunk, bool first_fetch, FpdtChunkIo& io, QuerySlot& slot);

  FpdtShape shape_;
  FpdtOptions options_;
  size_t element_bytes_;
  int64_t max_chunk_ = 0;
  bool forward_done_ = false;
  Stream compute_;
  Stream offload_;
  Stream general_;
  Event offload_mark_;
  Event general_mark_;
  Event produced_;
  Event row_done_;
  Event row_offloaded_;                // the newest chunk's q, k, v are on the host
  std::array<Event, 2> output_saved_;  // out, lse of the chunk using output buffer set i % 2 are on the host

  // Chunk stores: pinned host with offload, device without.
  ChunkStore q_store_, k_store_, v_store_, out_store_, lse_store_, dout_store_, dq_store_;

  // Forward working set.
  DeviceBuffer<std::byte> fwd_q_;  // offload: the current query chunk
  std::array<KvSlot, 3> fwd_kv_;   // offload
  DeviceBuffer<std::byte> block_out_;
  DeviceBuffer<float> block_lse_;
  DeviceBuffer<float> out_acc_;
  std::array<DeviceBuffer<std::byte>, 2> out_elem_;  // offload
  std::array<DeviceBuffer<float>, 2> lse_acc_;       // offload

  // Backward working set.
  std::array<QuerySlot, 2> query_slots_;  // offload
  std::array<KvSlot, 2> bwd_kv_;          // offload: resident and prefetched
  DeviceBuffer<float> dq_done_;           // offload: dq of the current key/value chunk, complete
  PinnedBuffer<float> dq_zeros_;          // offload: the zeros DeepSpeed's first dq fetches bring
  DeviceBuffer<float> dk_acc_, dv_acc_, delta_;
  DeviceBuffer<std::byte> dq_elem_, dk_elem_, dv_elem_;

  size_t device_bytes_ = 0;
  size_t pinned_bytes_ = 0;
};

}  // namespace trainsim::kernels

#endif  // TRAINSIM_KERNELS_FPDT_PIPELINE_H_
