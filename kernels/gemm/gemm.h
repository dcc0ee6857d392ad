// GEMMs through cuBLASLt with the layouts a transformer layer uses (GemmShape, row-major), bf16 and
// fp16 inputs (fp32 accumulation, 16-bit or fp32 output) and fp8 e4m3 inputs on GPUs that have it
// (compute capability 8.9+, bf16 output, forward layout only), the algorithm picked once by
// cuBLASLt's heuristic for a workspace.
#ifndef TRAINSIM_KERNELS_GEMM_GEMM_H_
#define TRAINSIM_KERNELS_GEMM_GEMM_H_

#include <cstddef>

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include "kernels/cuda/device_buffer.h"
#include "kernels/data_type.h"
#include "kernels/gemm/gemm_shape.h"

namespace trainsim::kernels {

// A cuBLASLt handle and the workspace its GEMMs may use, on the current device. Move-only.
class BlasLt {
 public:
  static constexpr size_t kDefaultWorkspaceBytes = size_t{32} << 20;  // what cuBLAS advises for Hopper

  // Throws GpuError.
  explicit BlasLt(size_t workspace_bytes = kDefaultWorkspaceBytes);
  ~BlasLt();
  BlasLt(const BlasLt&) = delete;
  BlasLt& operator=(const BlasLt&) = delete;

  cublasLtHandle_t handle() const { return handle_; }
  void* workspace() { return workspace_.data(); }
  size_t workspace_bytes() const { return workspace_.bytes(); }

 private:
  cublasLtHandle_t handle_ = nullptr;
  DeviceBuffer<std::byte> workspace_;
};

// The element types of one GEMM: A and B in `input`, C and D in `output`.
struct GemmTypes {
  DataType input = DataType::kBFloat16;
  DataType output = DataType::kBFloat16;
};

// True when GemmPlan accepts `types` for `shape` on a device of compute capability major.minor.
bool gemm_supported(const GemmShape& shape, const GemmTypes& types, int compute_major, int compute_minor);

// One GEMM shape and type set, planned: its layouts and the heuristic's algorithm. Runs any number
// of times, on any stream of the device it was planned on. Move-only.
class GemmPlan {
 public:
  // Throws std::invalid_argument for a combination this wrapper does not run (see gemm_supported:
  // inputs bf16 -> bf16 or fp32, fp16 -> fp16 or fp32, fp8 e4m3 -> bf16 with transpose_b,
  // !transpose_a, and m, n, k multiples of 16 on compute capability 8.9+), GpuError when cuBLASLt
  // fails or offers no algorithm.
  GemmPlan(BlasLt& blas, const GemmShape& shape, const GemmTypes& types);
  ~GemmPlan();
  GemmPlan(const GemmPlan&) = delete;
  GemmPlan& operator=(const GemmPlan&) = delete;

  // D = alpha·op(A)·op(B) + beta·C, enqueued on `stream`. Device pointers, dense row-major as
  // GemmShape describes, 256-byte aligned (cudaMalloc's alignment, which cuBLASLt's heuristic
  // assumes); c may equal d, and is not read when beta is 0. Throws std::invalid_argument on a null
  // or misaligned pointer, GpuError when the launch fails.
  void run(const void* a, const void* b, const void* c, void* d, float alpha, float beta,
           cudaStream_t stream);

 private:
  BlasLt* blas_;
  cublasLtMatmulDesc_t desc_ = nullptr;
  cublasLtMatrixLayout_t a_layout_ = nullptr;  // cuBLAS's column-major A: our B
  cublasLtMatrixLayout_t b_layout_ = nullptr;  // cuBLAS's column-major B: our A
  cublasLtMatrixLayout_t c_layout_ = nullptr;
  cublasLtMatmulAlgo_t algo_{};
};

}  // namespace trainsim::kernels

#endif  // TRAINSIM_KERNELS_GEMM_GEMM_H_
