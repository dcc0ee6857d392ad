#include "kernels/cuda/stream.h"

#include <utility>

#include "kernels/cuda/check.h"

namespace trainsim::kernels {

Stream::Stream() { CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking)); }

Stream::~Stream() {
  if (stream_ != nullptr) {
    cudaStreamDestroy(stream_);  // a destructor cannot report
  }
}

Stream::Stream(Stream&& other) noexcept : stream_(std::exchange(other.stream_, nullptr)) {}

Stream& Stream::operator=(Stream&& other) noexcept {
  if (this != &other) {
    if (stream_ != nullptr) {
      cudaStreamDestroy(stream_);
    }
    stream_ = std::exchange(other.stream_, nullptr);
  }
  return *this;
}

void Stream::synchronize() const { CUDA_CHECK(cudaStreamSynchronize(stream_)); }

void Stream::wait(const Event& event) const { CUDA_CHECK(cudaStreamWaitEvent(stream_, event.get(), 0)); }

}  // namespace trainsim::kernels
