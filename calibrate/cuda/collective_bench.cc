#include "calibrate/cuda/collective_bench.h"

#include <stdexcept>

#include <fmt/format.h>

#include "calibrate/collective_kinds.h"
#include "calibrate/cpu/host_timer.h"
#include "calibrate/cuda/event_timer.h"
#include "calibrate/cuda/fill.h"
#include "kernels/cuda/check.h"
#include "kernels/cuda/device.h"

namespace trainsim::calibrate::cuda {
namespace {

using config::CollectiveKind;
using kernels::DataType;

}  // namespace

CollectiveBench::CollectiveBench(int ranks) {
  for (int d = 0; d < ranks; ++d) devices_.push_back(d);
  comms_ = kernels::Communicator::create_local(devices_);
  for (const int d : devices_) {
    const kernels::DeviceGuard guard(d);
    streams_.emplace_back();
    send_.emplace_back();
    recv_.emplace_back();
  }
}

void CollectiveBench::ensure_buffers(double send_bytes, double recv_bytes) {
  for (size_t r = 0; r < devices_.size(); ++r) {
    const kernels::DeviceGuard guard(devices_[r]);
    const auto grow = [&](kernels::DeviceBuffer<std::byte>& buffer, double bytes, uint64_t seed) {
      if (static_cast<double>(buffer.size()) >= bytes) return;
      size_t size = 1 << 20;
      while (static_cast<double>(size) < bytes) size *= 2;
      buffer = kernels::DeviceBuffer<std::byte>();  // free first: the new one may need the memory
      buffer = kernels::DeviceBuffer<std::byte>(size);
      fill_uniform(buffer.data(), static_cast<int64_t>(size / 4), DataType::kFloat32, seed,
                   streams_[r].get());
    };
    grow(send_[r], send_bytes, 2 * r + 1);
    grow(recv_[r], recv_bytes, 2 * r + 2);
    streams_[r].synchronize();
  }
}

void CollectiveBench::enqueue_one(const CollectiveCase& c) {
  const int n = ranks();
  const size_t count = static_cast<size_t>(c.bytes / 4);  // floats, as nccl-tests' default -d float
  const size_t per_rank = count / static_cast<size_t>(n);
  kernels::NcclGroup group;
  for (int r = 0; r < n; ++r) {
    const size_t i = static_cast<size_t>(r);
    void* send = send_[i].data();
    void* recv = recv_[i].data();
    const cudaStream_t stream = streams_[i].get();
    switch (c.kind) {
      case CollectiveKind::kAllReduce:
        comms_[i].all_reduce(send, recv, count, DataType::kFloat32, kernels::ReduceOp::kSum, stream);
        break;
      case CollectiveKind::kAllGather:
        comms_[i].all_gather(send, recv, per_rank, DataType::kFloat32, stream);
        break;
      case CollectiveKind::kReduceScatter:
        comms_[i].reduce_scatter(send, recv, per_rank, DataType::kFloat32, kernels::ReduceOp::kSum, stream);
        break;
      case CollectiveKind::kAllToAll:
        comms_[i].all_to_all(send, recv, per_rank, DataType::kFloat32, stream);
        break;
      case CollectiveKind::kSendRecv:
        comms_[i].send(send, count, DataType::kFloat32, (r + 1) % n, stream);
        comms_[i].recv(recv, count, DataType::kFloat32, (r + n - 1) % n, stream);
        break;
      default:
        throw std::invalid_argument(fmt::format("no NCCL bench for {}", config::to_string(c.kind)));
    }
  }
  group.end();
}

std::vector<double> CollectiveBench::time(const CollectiveCase& c, const TimingPolicy& policy) {
  if (c.ranks != ranks()) throw std::invalid_argument("collective case for another group size");
  if (c.kind == CollectiveKind::kBarrier) {
    std::vector<cudaStream_t> streams;
    for (const kernels::Stream& s : streams_) streams.push_back(s.get());
    return cpu::time_on_host(policy, 1, [&](int) { kernels::barrier_all(comms_, streams); });
  }
  const RankBuffers buffers = rank_buffers(c.kind, c.ranks, c.bytes);
  if (buffers.send_bytes < 4 || buffers.recv_bytes < 4) {
    throw std::invalid_argument("smaller than one float per rank");
  }
  ensure_buffers(buffers.send_bytes, buffers.recv_bytes);
  std::vector<cudaStream_t> streams;
  for (const kernels::Stream& s : streams_) streams.push_back(s.get());
  return time_with_events_on(devices_, streams, policy, 1, [&](int) { enqueue_one(c); });
}

void CollectiveBench::enqueue(const CollectiveCase& c, int count) {
  const RankBuffers buffers = rank_buffers(c.kind, c.ranks, c.bytes);
  ensure_buffers(buffers.send_bytes, buffers.recv_bytes);
  for (int i = 0; i < count; ++i) enqueue_one(c);
}

bool CollectiveBench::busy() const {
  for (const kernels::Stream& s : streams_) {
    const cudaError_t status = cudaStreamQuery(s.get());
    if (status == cudaErrorNotReady) return true;
    CUDA_CHECK(status);
  }
  return false;
}

void CollectiveBench::synchronize() {
  for (kernels::Stream& s : streams_) s.synchronize();
}

}  // namespace trainsim::calibrate::cuda
