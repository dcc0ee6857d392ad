// Element types of the tensors the kernels read and write. CUDA-free.
#ifndef TRAINSIM_KERNELS_DATA_TYPE_H_
#define TRAINSIM_KERNELS_DATA_TYPE_H_

#include <cstddef>

namespace trainsim::kernels {

enum class DataType {
  kFloat32,
  kBFloat16,
  kFloat16,
  kFloat8E4M3,  // GEMM inputs only, on GPUs of compute capability 8.9 and above
};

constexpr size_t bytes_of(DataType type) {
  switch (type) {
    case DataType::kFloat32:
      return 4;
    case DataType::kBFloat16:
    case DataType::kFloat16:
      return 2;
    case DataType::kFloat8E4M3:
      return 1;
  }
  return 0;
}

constexpr const char* name_of(DataType type) {
  switch (type) {
    case DataType::kFloat32:
      return "fp32";
    case DataType::kBFloat16:
      return "bf16";
    case DataType::kFloat16:
      return "fp16";
    case DataType::kFloat8E4M3:
      return "fp8e4m3";
  }
  return "?";
}

}  // namespace trainsim::kernels

#endif  // TRAINSIM_KERNELS_DATA_TYPE_H_
