// DeviceBuffer<T>: owner of a cudaMalloc allocation (move-only, freed on destruction), with the
// blocking copies and the fill that setup and tests use.
#ifndef TRAINSIM_KERNELS_CUDA_DEVICE_BUFFER_H_
#define TRAINSIM_KERNELS_CUDA_DEVICE_BUFFER_H_

#include <cstddef>
#include <span>
#include <stdexcept>
#include <vector>

#include <cuda_runtime_api.h>

#include "kernels/cuda/allocation.h"
#include "kernels/cuda/check.h"

namespace trainsim::kernels {

template <typename T>
class DeviceBuffer : public Allocation<T, DeviceMemory> {
 public:
  using Allocation<T, DeviceMemory>::Allocation;
  using Allocation<T, DeviceMemory>::bytes;
  using Allocation<T, DeviceMemory>::data;
  using Allocation<T, DeviceMemory>::size;

  // Blocking copies for setup and tests. Throw std::invalid_argument on a size mismatch.
  void copy_from_host(std::span<const T> source) {
    if (source.size() != size()) {
      throw std::invalid_argument("DeviceBuffer::copy_from_host: size mismatch");
    }
    CUDA_CHECK(cudaMemcpy(data(), source.data(), bytes(), cudaMemcpyHostToDevice));
  }
  std::vector<T> copy_to_host() const {
    std::vector<T> result(size());
    CUDA_CHECK(cudaMemcpy(result.data(), data(), bytes(), cudaMemcpyDeviceToHost));
    return result;
  }
  // Sets every byte to `value` (0xFF poisons floats and halves with NaN), ordered on `stream`.
  void fill_bytes_async(int value, cudaStream_t stream) {
    CUDA_CHECK(cudaMemsetAsync(data(), value, bytes(), stream));
  }
};

}  // namespace trainsim::kernels

#endif  // TRAINSIM_KERNELS_CUDA_DEVICE_BUFFER_H_
