#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include "calibrate/cuda/fill.h"
#include "kernels/cuda/check.h"

namespace trainsim::calibrate::cuda {
namespace {

__device__ float uniform(uint64_t seed, int64_t index) {
  uint64_t x = seed ^ (static_cast<uint64_t>(index) * 0x9E3779B97F4A7C15ULL);
  x ^= x >> 33;
  x *= 0xFF51AFD7ED558CCDULL;
  x ^= x >> 33;
  x *= 0xC4CEB9FE1A85EC53ULL;
  x ^= x >> 33;
  return static_cast<float>(x >> 40) * (2.0F / 16777216.0F) - 1.0F;
}

template <typename T>
__global__ void fill_kernel(T* data, int64_t count, uint64_t seed) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) {
    data[i] = T(uniform(seed, i));
  }
}

template <typename T>
void launch(void* data, int64_t count, uint64_t seed, cudaStream_t stream) {
  if (count <= 0) return;
  const int threads = 256;
  const int64_t wanted = (count + threads - 1) / threads;
  const int blocks = static_cast<int>(wanted < 4096 ? wanted : 4096);
  fill_kernel<T><<<blocks, threads, 0, stream>>>(static_cast<T*>(data), count, seed);
  CUDA_CHECK_LAUNCH();
}

}  // namespace

void fill_uniform(void* data, int64_t count, kernels::DataType type, uint64_t seed, cudaStream_t stream) {
  switch (type) {
    case kernels::DataType::kFloat32:
      launch<float>(data, count, seed, stream);
      return;
    case kernels::DataType::kBFloat16:
      launch<__nv_bfloat16>(data, count, seed, stream);
      return;
    case kernels::DataType::kFloat16:
      launch<__half>(data, count, seed, stream);
      return;
    case kernels::DataType::kFloat8E4M3:
      launch<__nv_fp8_e4m3>(data, count, seed, stream);
      return;
  }
}

}  // namespace trainsim::calibrate::cuda
