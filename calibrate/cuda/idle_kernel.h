// A kernel that does nothing: what launch and synchronisation cost on their own.
#ifndef TRAINSIM_CALIBRATE_CUDA_IDLE_KERNEL_H_
#define TRAINSIM_CALIBRATE_CUDA_IDLE_KERNEL_H_

#include <cuda_runtime_api.h>

namespace trainsim::calibrate::cuda {

// Enqueues one single-thread kernel with an empty body on `stream`. Throws GpuError when the launch
// fails.
void launch_idle_kernel(cudaStream_t stream);

}  // namespace trainsim::calibrate::cuda

#endif  // TRAINSIM_CALIBRATE_CUDA_IDLE_KERNEL_H_
