// PinnedBuffer<T>: owner of page-locked host memory (cudaMallocHost), the only host memory that
// copies overlap with kernels from. Move-only, freed on destruction.
#ifndef TRAINSIM_KERNELS_CUDA_PINNED_BUFFER_H_
#define TRAINSIM_KERNELS_CUDA_PINNED_BUFFER_H_

#include <cstddef>
#include <utility>

#include <cuda_runtime_api.h>

#include "kernels/cuda/check.h"

namespace trainsim::kernels {

template <typename T>
class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  // Allocates `count` elements; the contents are undefined. Throws GpuError when it fails.
  explicit PinnedBuffer(size_t count) : size_(count) {
    if (count > 0) {
      CUDA_CHECK(cudaMallocHost(reinterpret_cast<void**>(&data_), count * sizeof(T)));
    }
  }
  ~PinnedBuffer() { release(); }
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  PinnedBuffer(PinnedBuffer&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}
  PinnedBuffer& operator=(PinnedBuffer&& other) noexcept {
    if (this != &other) {
      release();
      data_ = std::exchange(other.data_, nullptr);
      size_ = std::exchange(other.size_, 0);
    }
    return *this;
  }

  T* data() { return data_; }
  const T* data() const { return data_; }
  size_t size() const { return size_; }
  size_t bytes() const { return size_ * sizeof(T); }

 private:
  void release() noexcept {
    if (data_ != nullptr) {
      cudaFreeHost(data_);  // a destructor cannot report
      data_ = nullptr;
    }
  }

  T* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace trainsim::kernels

#endif  // TRAINSIM_KERNELS_CUDA_PINNED_BUFFER_H_
