#include "kernels/gemm/gemm.h"

#include <cstdint>
#include <stdexcept>
#include <string>

#include "kernels/cuda/check.h"

namespace trainsim::kernels {

namespace {

cudaDataType_t cuda_type(DataType type) {
  switch (type) {
    case DataType::kFloat32:
      return CUDA_R_32F;
    case DataType::kBFloat16:
      return CUDA_R_16BF;
    case DataType::kFloat16:
      return CUDA_R_16F;
    case DataType::kFloat8E4M3:
      return CUDA_R_8F_E4M3;
  }
  throw std::invalid_argument("GEMM: unknown data type");
}

std::string describe(const GemmShape& shape, const GemmTypes& types) {
  return std::to_string(shape.m) + "x" + std::to_string(shape.n) + "x" + std::to_string(shape.k) +
         (shape.transpose_a ? " Aᵀ" : "") + (shape.transpose_b ? " Bᵀ" : "") + " " + name_of(types.input) +
         "->" + name_of(types.output);
}

void set_attribute(cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attribute, int32_t value) {
  CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(desc, attribute, &value, sizeof(value)));
}

}  // namespace

BlasLt::BlasLt(size_t workspace_bytes) : workspace_(workspace_bytes) {
  CUBLAS_CHECK(cublasLtCreate(&handle_));
}

BlasLt::~BlasLt() {
  if (handle_ != nullptr) {
    cublasLtDestroy(handle_);  // a destructor cannot report
  }
}

bool gemm_supported(const GemmShape& shape, const GemmTypes& types, int compute_major, int compute_minor) {
  if (shape.m <= 0 || shape.n <= 0 || shape.k <= 0) {
    return false;
  }
  switch (types.input) {
    case DataType::kBFloat16:
      return types.output == DataType::kBFloat16 || types.output == DataType::kFloat32;
    case DataType::kFloat16:
      return types.output == DataType::kFloat16 || types.output == DataType::kFloat32;
    case DataType::kFloat8E4M3:
      // cuBLASLt's fp8 kernels need cuBLAS's "TN" layout (our forward layout) and 16-aligned sizes.
      return (compute_major > 8 || (compute_major == 8 && compute_minor >= 9)) &&
             types.output == DataType::kBFloat16 && shape.transpose_b && !shape.transpose_a &&
             shape.m % 16 == 0 && shape.n % 16 == 0 && shape.k % 16 == 0;
    case DataType::kFloat32:
      return false;
  }
  return false;
}

// Row-major D[m, n] = op(A)·op(B) is column-major Dᵀ[n, m] = op(B)ᵀ·op(A)ᵀ: cuBLAS's A is our B and
// its B our A, each seen column-major (a row-major [r, c] matrix is a column-major [c, r] one).
GemmPlan::GemmPlan(BlasLt& blas, const GemmShape& shape, const GemmTypes& types) : blas_(&blas) {
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  int major = 0;
  int minor = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
  if (!gemm_supported(shape, types, major, minor)) {
    throw std::invalid_argument("GEMM " + describe(shape, types) +
                                " is not supported on compute capability " + std::to_string(major) + "." +
                                std::to_string(minor));
  }
  CUBLAS_CHECK(cublasLtMatmulDescCreate(&desc_, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  set_attribute(desc_, CUBLASLT_MATMUL_DESC_TRANSA, shape.transpose_b ? CUBLAS_OP_T : CUBLAS_OP_N);
  set_attribute(desc_, CUBLASLT_MATMUL_DESC_TRANSB, shape.transpose_a ? CUBLAS_OP_T : CUBLAS_OP_N);
  // Stored (before op) column-major shapes: our B is [k, n] (or [n, k]) row-major.
  const uint64_t b_rows = shape.transpose_b ? shape.k : shape.n;
  const uint64_t b_cols = shape.transpose_b ? shape.n : shape.k;
  const uint64_t a_rows = shape.transpose_a ? shape.m : shape.k;
  const uint64_t a_cols = shape.transpose_a ? shape.k : shape.m;
  CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&a_layout_, cuda_type(types.input), b_rows, b_cols, b_rows));
  CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&b_layout_, cuda_type(types.input), a_rows, a_cols, a_rows));
  CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&c_layout_, cuda_type(types.output), shape.n, shape.m, shape.n));

  cublasLtMatmulPreference_t preference = nullptr;
  CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&preference));
  const uint64_t workspace = blas.workspace_bytes();
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  const cublasStatus_t status = [&] {
    const cublasStatus_t set = cublasLtMatmulPreferenceSetAttribute(
        preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace, sizeof(workspace));
    if (set != CUBLAS_STATUS_SUCCESS) {
      return set;
    }
    return cublasLtMatmulAlgoGetHeuristic(blas.handle(), desc_, a_layout_, b_layout_, c_layout_, c_layout_,
                                          preference, 1, &result, &found);
  }();
  cublasLtMatmulPreferenceDestroy(preference);
  CUBLAS_CHECK(status);
  if (found == 0) {
    throw_cublas_error(CUBLAS_STATUS_NOT_SUPPORTED,
                       ("cublasLtMatmulAlgoGetHeuristic for " + describe(shape, types)).c_str(), __FILE__,
                       __LINE__);
  }
  algo_ = result.algo;
}

GemmPlan::~GemmPlan() {
  // A destructor cannot report; each handle is destroyed even if another failed.
  if (c_layout_ != nullptr) {
    cublasLtMatrixLayoutDestroy(c_layout_);
  }
  if (b_layout_ != nullptr) {
    cublasLtMatrixLayoutDestroy(b_layout_);
  }
  if (a_layout_ != nullptr) {
    cublasLtMatrixLayoutDestroy(a_layout_);
  }
  if (desc_ != nullptr) {
    cublasLtMatmulDescDestroy(desc_);
  }
}

void GemmPlan::run(const void* a, const void* b, const void* c, void* d, float alpha, float beta,
                   cudaStream_t stream) {
  // cuBLASLt's heuristic assumes 256-byte aligned operands unless told otherwise.
  for (const void* pointer : {a, b, static_cast<const void*>(d), beta == 0.0F ? d : c}) {
    if (pointer == nullptr || reinterpret_cast<uintptr_t>(pointer) % 256 != 0) {
      throw std::invalid_argument(
          "GEMM: operands must be non-null and 256-byte aligned (as cudaMalloc returns)");
    }
  }
  const void* c_or_d = beta == 0.0F ? d : c;
  CUBLAS_CHECK(cublasLtMatmul(blas_->handle(), desc_, &alpha, b, a_layout_, a, b_layout_, &beta, c_or_d,
                              c_layout_, d, c_layout_, &algo_, blas_->workspace(), blas_->workspace_bytes(),
                              stream));
}

}  // namespace trainsim::kernels
