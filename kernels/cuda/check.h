// Error checking for every CUDA runtime, cuBLAS/cuBLASLt and NCCL call: CUDA_CHECK, CUBLAS_CHECK and
// NCCL_CHECK throw a GpuError carrying file:line, the failed call and the library's own message.
#ifndef TRAINSIM_KERNELS_CUDA_CHECK_H_
#define TRAINSIM_KERNELS_CUDA_CHECK_H_

#include <stdexcept>
#include <string>

#include <cublasLt.h>
#include <cuda_runtime_api.h>
#include <nccl.h>

namespace trainsim::kernels {

enum class GpuLibrary { kCudaRuntime, kCublas, kNccl };

// What a failed call reports. what() reads
//   "<file>:<line>: <call> failed: <library> error <code> (<name>): <message>".
class GpuError : public std::runtime_error {
 public:
  GpuError(GpuLibrary library, int code, const std::string& what);

  GpuLibrary library() const { return library_; }
  // The library's status value (cudaError_t, cublasStatus_t or ncclResult_t).
  int code() const { return code_; }

 private:
  GpuLibrary library_;
  int code_;
};

[[noreturn]] void throw_cuda_error(cudaError_t status, const char* call, const char* file, int line);
[[noreturn]] void throw_cublas_error(cublasStatus_t status, const char* call, const char* file, int line);
[[noreturn]] void throw_nccl_error(ncclResult_t status, const char* call, const char* file, int line);

}  // namespace trainsim::kernels

#define CUDA_CHECK(call)                                                                  \
  do {                                                                                    \
    const cudaError_t trainsim_status_ = (call);                                          \
    if (trainsim_status_ != cudaSuccess) {                                                \
      ::trainsim::kernels::throw_cuda_error(trainsim_status_, #call, __FILE__, __LINE__); \
    }                                                                                     \
  } while (false)

#define CUBLAS_CHECK(call)                                                                  \
  do {                                                                                      \
    const cublasStatus_t trainsim_status_ = (call);                                         \
    if (trainsim_status_ != CUBLAS_STATUS_SUCCESS) {                                        \
      ::trainsim::kernels::throw_cublas_error(trainsim_status_, #call, __FILE__, __LINE__); \
    }                                                                                       \
  } while (false)

#define NCCL_CHECK(call)                                                                  \
  do {                                                                                    \
    const ncclResult_t trainsim_status_ = (call);                                         \
    if (trainsim_status_ != ncclSuccess) {                                                \
      ::trainsim::kernels::throw_nccl_error(trainsim_status_, #call, __FILE__, __LINE__); \
    }                                                                                     \
  } while (false)

// After a kernel launch: the launch configuration error, if any.
#define CUDA_CHECK_LAUNCH() CUDA_CHECK(cudaGetLastError())

#endif  // TRAINSIM_KERNELS_CUDA_CHECK_H_
