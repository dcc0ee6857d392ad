#include "kernels/nccl/communicator.h"

#include <stdexcept>
#include <utility>

#include "kernels/cuda/check.h"
#include "kernels/cuda/device.h"

namespace trainsim::kernels {

namespace {

ncclRedOp_t nccl_op(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum:
      return ncclSum;
    case ReduceOp::kMax:
      return ncclMax;
    case ReduceOp::kMin:
      return ncclMin;
    case ReduceOp::kAvg:
      return ncclAvg;
  }
  throw std::invalid_argument("NCCL: unknown reduction");
}

const char* offset(const void* base, size_t elements, DataType type) {
  return static_cast<const char*>(base) + elements * bytes_of(type);
}

}  // namespace

ncclDataType_t nccl_type(DataType type) {
  switch (type) {
    case DataType::kFloat32:
      return ncclFloat32;
    case DataType::kBFloat16:
      return ncclBfloat16;
    case DataType::kFloat16:
      return ncclFloat16;
    case DataType::kFloat8E4M3:
      return ncclFloat8e4m3;
  }
  throw std::invalid_argument("NCCL: unknown data type");
}

Communicator::Communicator(ncclComm_t comm, int device) : comm_(comm), device_(device) {
  NCCL_CHECK(ncclCommUserRank(comm, &rank_));
  NCCL_CHECK(ncclCommCount(comm, &size_));
  const DeviceGuard guard(device);
  barrier_value_ = DeviceBuffer<float>(1);
}

std::vector<Communicator> Communicator::create_local(const std::vector<int>& devices) {
  std::vector<ncclComm_t> comms(devices.size());
  NCCL_CHECK(ncclCommInitAll(comms.data(), static_cast<int>(devices.size()), devices.data()));
  std::vector<Communicator> result;
  for (size_t i = 0; i < devices.size(); ++i) {
    result.push_back(Communicator(comms[i], devices[i]));
  }
  return result;
}

Communicator Communicator::create_rank(const ncclUniqueId& id, int ranks, int rank) {
  ncclComm_t comm = nullptr;
  NCCL_CHECK(ncclCommInitRank(&comm, ranks, id, rank));
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  return Communicator(comm, device);
}

Communicator::~Communicator() {
  if (comm_ != nullptr) {
    ncclCommDestroy(comm_);  // a destructor cannot report
  }
}

Communicator::Communicator(Communicator&& other) noexcept
    : comm_(std::exchange(other.comm_, nullptr)),
      rank_(other.rank_),
      size_(other.size_),
      device_(other.device_),
      barrier_value_(std::move(other.barrier_value_)) {}

Communicator& Communicator::operator=(Communicator&& other) noexcept {
  if (this != &other) {
    if (comm_ != nullptr) {
      ncclCommDestroy(comm_);
    }
    comm_ = std::exchange(other.comm_, nullptr);
    rank_ = other.rank_;
    size_ = other.size_;
    device_ = other.device_;
    barrier_value_ = std::move(other.barrier_value_);
  }
  return *this;
}

void Communicator::all_reduce(const void* send, void* recv, size_t count, DataType type, ReduceOp op,
                              cudaStream_t stream) const {
  NCCL_CHECK(ncclAllReduce(send, recv, count, nccl_type(type), nccl_op(op), comm_, stream));
}

void Communicator::all_gather(const void* send, void* recv, size_t send_count, DataType type,
                              cudaStream_t stream) const {
  NCCL_CHECK(ncclAllGather(send, recv, send_count, nccl_type(type), comm_, stream));
}

void Communicator::reduce_scatter(const void* send, void* recv, size_t recv_count, DataType type, ReduceOp op,
                                  cudaStream_t stream) const {
  NCCL_CHECK(ncclReduceScatter(send, recv, recv_count, nccl_type(type), nccl_op(op), comm_, stream));
}

// Grouped point-to-point, as torch's all_to_all_single does on NCCL.
void Communicator::all_to_all(const void* send, void* recv, size_t count, DataType type,
                              cudaStream_t stream) const {
  NcclGroup group;
  for (int peer = 0; peer < size_; ++peer) {
    NCCL_CHECK(ncclSend(offset(send, peer * count, type), count, nccl_type(type), peer, comm_, stream));
    NCCL_CHECK(ncclRecv(const_cast<char*>(offset(recv, peer * count, type)), count, nccl_type(type), peer,
                        comm_, stream));
  }
  group.end();
}

void Communicator::send(const void* data, size_t count, DataType type, int peer, cudaStream_t stream) const {
  NCCL_CHECK(ncclSend(data, count, nccl_type(type), peer, comm_, stream));
}

void Communicator::recv(void* data, size_t count, DataType type, int peer, cudaStream_t stream) const {
  NCCL_CHECK(ncclRecv(data, count, nccl_type(type), peer, comm_, stream));
}

void Communicator::enqueue_barrier(cudaStream_t stream) {
  NCCL_CHECK(
      ncclAllReduce(barrier_value_.data(), barrier_value_.data(), 1, ncclFloat32, ncclSum, comm_, stream));
}

void Communicator::barrier(cudaStream_t stream) {
  enqueue_barrier(stream);
  CUDA_CHECK(cudaStreamSynchronize(stream));
}

void barrier_all(std::span<Communicator> comms, std::span<const cudaStream_t> streams) {
  if (comms.size() != streams.size()) {
    throw std::invalid_argument("barrier_all: one stream per communicator");
  }
  NcclGroup group;
  for (size_t i = 0; i < comms.size(); ++i) {
    comms[i].enqueue_barrier(streams[i]);
  }
  group.end();
  for (const cudaStream_t stream : streams) {
    CUDA_CHECK(cudaStreamSynchronize(stream));
  }
}

NcclGroup::NcclGroup() { NCCL_CHECK(ncclGroupStart()); }

NcclGroup::~NcclGroup() {
  if (open_) {
    ncclGroupEnd();  // a destructor cannot report
  }
}

void NcclGroup::end() {
  open_ = false;
  NCCL_CHECK(ncclGroupEnd());
}

}  // namespace trainsim::kernels
