#include "kernels/bench/tensors.h"

#include <cmath>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "kernels/cuda/check.h"

namespace trainsim::kernels::bench {

namespace {

uint16_t to_bits(float value, DataType type) {
  if (type == DataType::kBFloat16) {
    const __nv_bfloat16_raw raw = __float2bfloat16_rn(value);
    return raw.x;
  }
  const __half_raw raw = __float2half_rn(value);
  return raw.x;
}

float from_bits(uint16_t bits, DataType type) {
  if (type == DataType::kBFloat16) {
    __nv_bfloat16_raw raw;
    raw.x = bits;
    return __bfloat162float(__nv_bfloat16(raw));
  }
  __half_raw raw;
  raw.x = bits;
  return __half2float(__half(raw));
}

// splitmix64: fast, and good enough for test data.
uint64_t next(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

}  // namespace

Tensor16 random_tensor16(int64_t count, DataType type, uint64_t seed) {
  Tensor16 t{DeviceBuffer<uint16_t>(static_cast<size_t>(count)),
             std::vector<float>(static_cast<size_t>(count))};
  std::vector<uint16_t> bits(t.values.size());
  uint64_t state = seed;
  for (size_t i = 0; i < bits.size(); ++i) {
    const uint64_t r = next(state);
    const float magnitude = 1.0F / 64.0F + static_cast<float>(r >> 40) * (63.0F / 64.0F / 16777216.0F);
    bits[i] = to_bits((r & 1) != 0 ? magnitude : -magnitude, type);
    t.values[i] = from_bits(bits[i], type);
  }
  t.device.copy_from_host(bits);
  return t;
}

std::vector<float> download16(const void* device, int64_t count, DataType type) {
  std::vector<uint16_t> bits(static_cast<size_t>(count));
  CUDA_CHECK(cudaMemcpy(bits.data(), device, bits.size() * 2, cudaMemcpyDeviceToHost));
  std::vector<float> values(bits.size());
  for (size_t i = 0; i < bits.size(); ++i) {
    values[i] = from_bits(bits[i], type);
  }
  return values;
}

bool all_finite(const std::vector<float>& values) {
  for (const float x : values) {
    if (!std::isfinite(x)) {
      return false;
    }
  }
  return true;
}

}  // namespace trainsim::kernels::bench
