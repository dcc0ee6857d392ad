// The entry point of libtrainsim_calibrate_cuda.so, the CUDA backend's module (calibrate/cuda_module.h).
#include "calibrate/cuda/cuda_backend.h"
#include "calibrate/cuda_module.h"

extern "C" trainsim::calibrate::Backend* trainsim_calibrate_cuda_backend(int devices, bool wgmma) {
  using trainsim::kernels::AttentionKernel;
  return new trainsim::calibrate::cuda::CudaBackend(
      devices, wgmma ? AttentionKernel::kWgmma : AttentionKernel::kMmaSync);
}
