#include "kernels/cuda/check.h"

namespace trainsim::kernels {

namespace {

std::string describe(const char* call, const char* file, int line, const char* library, int code,
                     const char* name, const char* message) {
  return std::string(file) + ":" + std::to_string(line) + ": " + call + " failed: " + library + " error " +
         std::to_string(code) + " (" + name + "): " + message;
}

}  // namespace

GpuError::GpuError(GpuLibrary library, int code, const std::string& what)
    : std::runtime_error(what), library_(library), code_(code) {}

void throw_cuda_error(cudaError_t status, const char* call, const char* file, int line) {
  throw GpuError(
      GpuLibrary::kCudaRuntime, status,
      describe(call, file, line, "CUDA", status, cudaGetErrorName(status), cudaGetErrorString(status)));
}

void throw_cublas_error(cublasStatus_t status, const char* call, const char* file, int line) {
  throw GpuError(GpuLibrary::kCublas, status,
                 describe(call, file, line, "cuBLAS", status, cublasLtGetStatusName(status),
                          cublasLtGetStatusString(status)));
}

void throw_nccl_error(ncclResult_t status, const char* call, const char* file, int line) {
  // ncclGetLastError adds the detail NCCL logged for the failing call (may be empty).
  const char* detail = ncclGetLastError(nullptr);
  const std::string message = std::string(ncclGetErrorString(status)) +
                              (detail != nullptr && *detail != '\0' ? std::string("; ") + detail : "");
  throw GpuError(GpuLibrary::kNccl, status,
                 describe(call, file, line, "NCCL", status, "ncclResult_t", message.c_str()));
}

}  // namespace trainsim::kernels
