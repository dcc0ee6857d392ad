#include <algorithm>
#include <stdexcept>

#include <cuda_runtime.h>

#include "kernels/cuda/check.h"
#include "kernels/cuda/convert.h"
#include "kernels/cuda/element.cuh"

namespace trainsim::kernels {

namespace {

template <typename Element>
__global__ void convert_float_kernel(const float* src, Element* dst, int64_t count) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) {
    dst[i] = ElementTraits<Element>::from_float(src[i]);
  }
}

}  // namespace

void convert_float(const float* src, void* dst, DataType dst_type, int64_t count, cudaStream_t stream) {
  constexpr int kThreads = 256;
  const auto blocks =
      static_cast<unsigned>(std::clamp<int64_t>((count + kThreads - 1) / kThreads, 1, 1 << 16));
  switch (dst_type) {
    case DataType::kBFloat16:
      convert_float_kernel<<<blocks, kThreads, 0, stream>>>(src, static_cast<__nv_bfloat16*>(dst), count);
      break;
    case DataType::kFloat16:
      convert_float_kernel<<<blocks, kThreads, 0, stream>>>(src, static_cast<__half*>(dst), count);
      break;
    default:
      throw std::invalid_argument(std::string("convert_float: unsupported destination type ") +
                                  name_of(dst_type));
  }
  CUDA_CHECK_LAUNCH();
}

}  // namespace trainsim::kernels
