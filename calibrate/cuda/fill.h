// Seeded random device tensors for timing: real data, because all-zero inputs let the tensor cores
// draw less power and clock higher than in training.
#ifndef TRAINSIM_CALIBRATE_CUDA_FILL_H_
#define TRAINSIM_CALIBRATE_CUDA_FILL_H_

#include <cstdint>

#include <cuda_runtime_api.h>

#include "kernels/data_type.h"

namespace trainsim::calibrate::cuda {

// Writes `count` elements of `type` at device pointer `data`: values uniform in [-1, 1] from a hash
// of (seed, index), rounded to the type. Enqueued on `stream`. Throws GpuError when the launch fails.
void fill_uniform(void* data, int64_t count, kernels::DataType type, uint64_t seed, cudaStream_t stream);

}  // namespace trainsim::calibrate::cuda

#endif  // TRAINSIM_CALIBRATE_CUDA_FILL_H_
