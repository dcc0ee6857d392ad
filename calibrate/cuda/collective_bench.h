// NCCL collectives over the first `ranks` GPUs of the node, driven from this thread the way
// nccl-tests drives them (one communicator per GPU, ncclGroupStart/End around the calls that form
// one collective), with float sums and nccl-tests' size conventions.
#ifndef TRAINSIM_CALIBRATE_CUDA_COLLECTIVE_BENCH_H_
#define TRAINSIM_CALIBRATE_CUDA_COLLECTIVE_BENCH_H_

#include <vector>

#include "calibrate/backend.h"
#include "calibrate/cases.h"
#include "kernels/cuda/device_buffer.h"
#include "kernels/cuda/stream.h"
#include "kernels/nccl/communicator.h"

namespace trainsim::calibrate::cuda {

class CollectiveBench {
 public:
  // Communicators and streams over devices 0..ranks-1. Throws GpuError.
  explicit CollectiveBench(int ranks);

  int ranks() const { return static_cast<int>(comms_.size()); }

  // Times `c` (c.ranks == ranks()): per repetition, the slowest rank's time between CUDA events
  // around back-to-back collectives; the barrier (a host-blocking call) on the host clock. Throws
  // std::invalid_argument for a kind this bench does not run or a size below one element per rank.
  std::vector<double> time(const CollectiveCase& c, const TimingPolicy& policy);

  // Enqueues `count` back-to-back collectives `c` on the ranks' streams and returns at once.
  void enqueue(const CollectiveCase& c, int count);
  // Waits for everything enqueued.
  void synchronize();
  // True while some rank's stream still has work.
  bool busy() const;

 private:
  void ensure_buffers(double send_bytes, double recv_bytes);
  void enqueue_one(const CollectiveCase& c);

  std::vector<int> devices_;
  std::vector<kernels::Communicator> comms_;
  std::vector<kernels::Stream> streams_;
  std::vector<kernels::DeviceBuffer<std::byte>> send_;
  std::vector<kernels::DeviceBuffer<std::byte>> recv_;
};

}  // namespace trainsim::calibrate::cuda

#endif  // TRAINSIM_CALIBRATE_CUDA_COLLECTIVE_BENCH_H_
