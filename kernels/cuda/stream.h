// Stream: owner of a cudaStream_t (move-only).
#ifndef TRAINSIM_KERNELS_CUDA_STREAM_H_
#define TRAINSIM_KERNELS_CUDA_STREAM_H_

#include <cuda_runtime_api.h>

#include "kernels/cuda/event.h"

namespace trainsim::kernels {

class Stream {
 public:
  // A new stream on the current device that does not synchronise with the legacy default stream.
  // Throws GpuError.
  Stream();
  ~Stream();
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  Stream(Stream&& other) noexcept;
  Stream& operator=(Stream&& other) noexcept;

  cudaStream_t get() const { return stream_; }
  // Blocks the host until everything enqueued so far is done (cudaStreamSynchronize).
  void synchronize() const;
  // Later work on this stream waits for `event`'s captured work, without blocking the host.
  void wait(const Event& event) const;

 private:
  cudaStream_t stream_ = nullptr;
};

}  // namespace trainsim::kernels

#endif  // TRAINSIM_KERNELS_CUDA_STREAM_H_
