#include "kernels/device_query.h"

#if TRAINSIM_KERNELS_WITH_CUDA
#include <cuda_runtime_api.h>
#endif

namespace trainsim::kernels {

int cuda_device_count() noexcept {
#if TRAINSIM_KERNELS_WITH_CUDA
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky error so later calls start clean
    return 0;
  }
  return count;
#else
  return 0;
#endif
}

bool cuda_device_available() noexcept { return cuda_device_count() > 0; }

}  // namespace trainsim::kernels
