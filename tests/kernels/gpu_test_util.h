// Helpers of the GPU tests: skipping without a device, and moving random 16-bit tensors.
#ifndef TRAINSIM_TESTS_KERNELS_GPU_TEST_UTIL_H_
#define TRAINSIM_TESTS_KERNELS_GPU_TEST_UTIL_H_

#include <random>
#include <span>
#include <vector>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "kernels/cuda/device_buffer.h"
#include "kernels/data_type.h"
#include "kernels/device_query.h"
#include "tests/kernels/test_util.h"

// Skips the test (a GPU test without a device is skipped, not failed).
#define TRAINSIM_SKIP_WITHOUT_GPU()                                 \
  do {                                                              \
    if (!::trainsim::kernels::cuda_device_available()) {            \
      GTEST_SKIP() << "no CUDA device (cudaGetDeviceCount failed)"; \
    }                                                               \
  } while (false)

namespace trainsim::kernels::testing {

inline uint16_t to_bits(float value, DataType type) {
  if (type == DataType::kBFloat16) {
    const __nv_bfloat16_raw raw = __float2bfloat16_rn(value);
    return raw.x;
  }
  const __half_raw raw = __float2half_rn(value);
  return raw.x;
}

inline float from_bits(uint16_t bits, DataType type) {
  if (type == DataType::kBFloat16) {
    __nv_bfloat16_raw raw;
    raw.x = bits;
    return __bfloat162float(__nv_bfloat16(raw));
  }
  __half_raw raw;
  raw.x = bits;
  return __half2float(__half(raw));
}

// A device tensor of random 16-bit values (never zero) and the float values it holds exactly.
struct RandomTensor {
  DeviceBuffer<uint16_t> device;
  std::vector<float> values;
};

inline RandomTensor random_device_tensor(int64_t count, DataType type, std::mt19937& rng,
                                         double scale = 1.0) {
  RandomTensor t{DeviceBuffer<uint16_t>(static_cast<size_t>(count)), random_tensor<float>(count, rng, scale)};
  std::vector<uint16_t> bits(t.values.size());
  for (size_t i = 0; i < bits.size(); ++i) {
    bits[i] = to_bits(t.values[i], type);
    t.values[i] = from_bits(bits[i], type);
  }
  t.device.copy_from_host(bits);
  return t;
}

inline std::vector<float> download(const DeviceBuffer<uint16_t>& buffer, DataType type) {
  const std::vector<uint16_t> bits = buffer.copy_to_host();
  std::vector<float> values(bits.size());
  for (size_t i = 0; i < bits.size(); ++i) {
    values[i] = from_bits(bits[i], type);
  }
  return values;
}

inline DeviceBuffer<float> upload(const std::vector<float>& values) {
  DeviceBuffer<float> buffer(values.size());
  buffer.copy_from_host(values);
  return buffer;
}

}  // namespace trainsim::kernels::testing

#endif  // TRAINSIM_TESTS_KERNELS_GPU_TEST_UTIL_H_
