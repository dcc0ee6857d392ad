// Rounding fp32 accumulators to the 16-bit element type (FPDT's out.to(bf16) and the cast of dq,
// dk, dv before their all-to-all).
#ifndef TRAINSIM_KERNELS_CUDA_CONVERT_H_
#define TRAINSIM_KERNELS_CUDA_CONVERT_H_

#include <cstdint>

#include <cuda_runtime_api.h>

#include "kernels/data_type.h"

namespace trainsim::kernels {

// dst[i] = round-to-nearest(src[i]) in `dst_type` (bf16 or fp16) for i < count, enqueued on `stream`.
// Throws std::invalid_argument for another type, GpuError when the launch fails.
void convert_float(const float* src, void* dst, DataType dst_type, int64_t count, cudaStream_t stream);

}  // namespace trainsim::kernels

#endif  // TRAINSIM_KERNELS_CUDA_CONVERT_H_
