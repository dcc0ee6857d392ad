#include "kernels/cuda/device.h"

#include <cuda_runtime_api.h>

#include "kernels/cuda/check.h"

namespace trainsim::kernels {

DeviceInfo device_info(int index) {
  cudaDeviceProp prop{};
  CUDA_CHECK(cudaGetDeviceProperties(&prop, index));
  return {index, prop.name, prop.major, prop.minor, prop.multiProcessorCount, prop.totalGlobalMem};
}

int current_device() {
  int index = 0;
  CUDA_CHECK(cudaGetDevice(&index));
  return index;
}

DeviceGuard::DeviceGuard(int index) : previous_(current_device()) { CUDA_CHECK(cudaSetDevice(index)); }

DeviceGuard::~DeviceGuard() { cudaSetDevice(previous_); }  // a destructor cannot report

}  // namespace trainsim::kernels
