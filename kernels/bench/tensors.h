// Random test tensors for the benchmark: fast seeded values (never zero) on the host, rounded to the
// 16-bit element type and uploaded, so the host copy holds exactly what the GPU reads.
#ifndef TRAINSIM_KERNELS_BENCH_TENSORS_H_
#define TRAINSIM_KERNELS_BENCH_TENSORS_H_

#include <cstdint>
#include <vector>

#include "kernels/cuda/device_buffer.h"
#include "kernels/data_type.h"

namespace trainsim::kernels::bench {

struct Tensor16 {
  DeviceBuffer<uint16_t> device;
  std::vector<float> values;  // exactly the device values
};

// `count` values uniform in ±[1/64, 1] (so no zero), seeded, in bf16 or fp16.
Tensor16 random_tensor16(int64_t count, DataType type, uint64_t seed);

// Float values of 16-bit device data (bf16 or fp16).
std::vector<float> download16(const void* device, int64_t count, DataType type);

// True when no value is NaN or infinite.
bool all_finite(const std::vector<float>& values);

}  // namespace trainsim::kernels::bench

#endif  // TRAINSIM_KERNELS_BENCH_TENSORS_H_
