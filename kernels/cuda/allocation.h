// Allocation<T, Memory>: owner of `count` elements of T that Memory allocates and frees (move-only,
// freed on destruction). DeviceBuffer (device_buffer.h) and PinnedBuffer (pinned_buffer.h) are its
// two kinds.
#ifndef TRAINSIM_KERNELS_CUDA_ALLOCATION_H_
#define TRAINSIM_KERNELS_CUDA_ALLOCATION_H_

#include <cstddef>
#include <utility>

#include <cuda_runtime_api.h>

#include "kernels/cuda/check.h"

namespace trainsim::kernels {

// Memory on the current device (cudaMalloc).
struct DeviceMemory {
  static cudaError_t allocate(void** data, size_t bytes) { return cudaMalloc(data, bytes); }
  static void free(void* data) noexcept { cudaFree(data); }
};

// Page-locked host memory (cudaMallocHost), the only host memory that copies overlap with kernels from.
struct PinnedMemory {
  static cudaError_t allocate(void** data, size_t bytes) { return cudaMallocHost(data, bytes); }
  static void free(void* data) noexcept { cudaFreeHost(data); }
};

template <typename T, typename Memory>
class Allocation {
 public:
  Allocation() = default;
  // Allocates `count` elements; the contents are undefined. Throws GpuError when it fails.
  explicit Allocation(size_t count) : size_(count) {
    if (count > 0) CUDA_CHECK(Memory::allocate(reinterpret_cast<void**>(&data_), count * sizeof(T)));
  }
  ~Allocation() { release(); }
  Allocation(const Allocation&) = delete;
  Allocation& operator=(const Allocation&) = delete;
  Allocation(Allocation&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}
  Allocation& operator=(Allocation&& other) noexcept {
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
      // A destructor cannot report; a failure here means the context is already gone.
      Memory::free(data_);
      data_ = nullptr;
    }
  }

  T* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace trainsim::kernels

#endif  // TRAINSIM_KERNELS_CUDA_ALLOCATION_H_
