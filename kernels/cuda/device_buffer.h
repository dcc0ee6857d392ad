// DeviceBuffer<T>: owner of a cudaMalloc allocation (move-only, freed on destruction).
#ifndef TRAINSIM_KERNELS_CUDA_DEVICE_BUFFER_H_
#define TRAINSIM_KERNELS_CUDA_DEVICE_BUFFER_H_

#include <cstddef>
#include <span>
#include <stdexcept>
#include <utility>
#include <vector>

#include <cuda_runtime_api.h>

#include "kernels/cuda/check.h"

namespace trainsim::kernels {

template <typename T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  // Allocates `count` elements on the current device; the contents are undefined. Throws GpuError
  // when the allocation fails.
  explicit DeviceBuffer(size_t count) : size_(count) {
    if (count > 0) {
      CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&data_), count * sizeof(T)));
    }
  }
  ~DeviceBuffer() { release(); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
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

  // Blocking copies for setup and tests. Throw std::invalid_argument on a size mismatch.
  void copy_from_host(std::span<const T> source) {
    if (source.size() != size_) {
      throw std::invalid_argument("DeviceBuffer::copy_from_host: size mismatch");
    }
    CUDA_CHECK(cudaMemcpy(data_, source.data(), bytes(), cudaMemcpyHostToDevice));
  }
  std::vector<T> copy_to_host() const {
    std::vector<T> result(size_);
    CUDA_CHECK(cudaMemcpy(result.data(), data_, bytes(), cudaMemcpyDeviceToHost));
    return result;
  }
  // Sets every byte to `value` (0xFF poisons floats and halves with NaN), ordered on `stream`.
  void fill_bytes_async(int value, cudaStream_t stream) {
    CUDA_CHECK(cudaMemsetAsync(data_, value, bytes(), stream));
  }

 private:
  void release() noexcept {
    if (data_ != nullptr) {
      cudaFree(data_);  // a destructor cannot report; a failure here means the context is already gone
      data_ = nullptr;
    }
  }

  T* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace trainsim::kernels

#endif  // TRAINSIM_KERNELS_CUDA_DEVICE_BUFFER_H_
