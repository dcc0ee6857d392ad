// Element types of the attention kernels (bf16, fp16) and packing of two floats into the 32-bit
// registers that mma.sync reads.
#ifndef TRAINSIM_KERNELS_CUDA_ELEMENT_CUH_
#define TRAINSIM_KERNELS_CUDA_ELEMENT_CUH_

#include <cstdint>
#include <cstring>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "kernels/data_type.h"

namespace trainsim::kernels {

template <typename Element>
struct ElementTraits;

template <>
struct ElementTraits<__nv_bfloat16> {
  static constexpr DataType kType = DataType::kBFloat16;
  // `lo` goes to the lower 16 bits (the lower column of an mma fragment register).
  __host__ __device__ static uint32_t pack(float lo, float hi) {
    const __nv_bfloat162 pair = __floats2bfloat162_rn(lo, hi);
    uint32_t bits;
    memcpy(&bits, &pair, sizeof(bits));
    return bits;
  }
  __host__ __device__ static float to_float(__nv_bfloat16 x) { return __bfloat162float(x); }
  __host__ __device__ static __nv_bfloat16 from_float(float x) { return __float2bfloat16_rn(x); }
};

template <>
struct ElementTraits<__half> {
  static constexpr DataType kType = DataType::kFloat16;
  __host__ __device__ static uint32_t pack(float lo, float hi) {
    const __half2 pair = __floats2half2_rn(lo, hi);
    uint32_t bits;
    memcpy(&bits, &pair, sizeof(bits));
    return bits;
  }
  __host__ __device__ static float to_float(__half x) { return __half2float(x); }
  __host__ __device__ static __half from_float(float x) { return __float2half_rn(x); }
};

}  // namespace trainsim::kernels

#endif  // TRAINSIM_KERNELS_CUDA_ELEMENT_CUH_
