// A thin NCCL wrapper: communicators over the GPUs of this process (ncclCommInitAll) or one rank of a
// multi-process job (ncclCommInitRank, see bootstrap.h), and the collectives a training step uses.
#ifndef TRAINSIM_KERNELS_NCCL_COMMUNICATOR_H_
#define TRAINSIM_KERNELS_NCCL_COMMUNICATOR_H_

#include <cstddef>
#include <span>
#include <vector>

#include <cuda_runtime_api.h>
#include <nccl.h>

#include "kernels/cuda/device_buffer.h"
#include "kernels/data_type.h"

namespace trainsim::kernels {

enum class ReduceOp { kSum, kMax, kMin, kAvg };

ncclDataType_t nccl_type(DataType type);

// One rank's communicator. Move-only; destroyed (ncclCommDestroy) with the object. Every
// collective is enqueued on `stream`, which must belong to this communicator's device, and returns
// at once. Counts are elements of `type`. When one thread drives several communicators (one per
// local GPU), it must enclose the calls that form one collective in a NcclGroup, or NCCL deadlocks.
class Communicator {
 public:
  // One communicator per device in `devices`, ranks in that order, in this process. Throws GpuError.
  static std::vector<Communicator> create_local(const std::vector<int>& devices);
  // Rank `rank` of `ranks` processes that share `id` (rank 0 makes it with ncclGetUniqueId and hands
  // it to the others, see bootstrap.h), on the current device. Throws GpuError.
  static Communicator create_rank(const ncclUniqueId& id, int ranks, int rank);

  ~Communicator();
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;
  Communicator(Communicator&& other) noexcept;
  Communicator& operator=(Communicator&& other) noexcept;

  ncclComm_t get() const { return comm_; }
  int rank() const { return rank_; }
  int size() const { return size_; }
  int device() const { return device_; }

  void all_reduce(const void* send, void* recv, size_t count, DataType type, ReduceOp op,
                  cudaStream_t stream) const;
  // recv holds size()·send_count elements, rank r's at r·send_count.
  void all_gather(const void* send, void* recv, size_t send_count, DataType type, cudaStream_t stream) const;
  // send holds size()·recv_count elements; rank r receives the reduction of block r.
  void reduce_scatter(const void* send, void* recv, size_t recv_count, DataType type, ReduceOp op,
                      cudaStream_t stream) const;
  // Block r (count elements at r·count) of send goes to rank r; block r of recv comes from rank r.
  void all_to_all(const void* send, void* recv, size_t count, DataType type, cudaStream_t stream) const;
  void send(const void* data, size_t count, DataType type, int peer, cudaStream_t stream) const;
  void recv(void* data, size_t count, DataType type, int peer, cudaStream_t stream) const;
  // A one-element all-reduce, then a host wait for it: torch.distributed.barrier() on NCCL, which
  // FPDT calls once per chunk. For one communicator per process; see barrier_all for local sets.
  void barrier(cudaStream_t stream);

 private:
  Communicator(ncclComm_t comm, int device);
  void enqueue_barrier(cudaStream_t stream);
  friend void barrier_all(std::span<Communicator> comms, std::span<const cudaStream_t> streams);

  ncclComm_t comm_ = nullptr;
  int rank_ = 0;
  int size_ = 0;
  int device_ = 0;
  DeviceBuffer<float> barrier_value_;
};

// The barrier over communicators driven by this thread (one per local GPU), each on its stream.
void barrier_all(std::span<Communicator> comms, std::span<const cudaStream_t> streams);

// ncclGroupStart() for the object's lifetime; end() closes the group and reports errors (the
// destructor closes it silently if end() was not called, e.g. during unwinding).
class NcclGroup {
 public:
  NcclGroup();
  ~NcclGroup();
  NcclGroup(const NcclGroup&) = delete;
  NcclGroup& operator=(const NcclGroup&) = delete;
  // Throws GpuError.
  void end();

 private:
  bool open_ = true;
};

}  // namespace trainsim::kernels

#endif  // TRAINSIM_KERNELS_NCCL_COMMUNICATOR_H_
