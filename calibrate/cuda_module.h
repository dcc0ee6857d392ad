// The CUDA backend as a module loaded on first use. Linking cuBLASLt into a program costs it about
// 0.75 s and 210 MB at every start (the library's initialisers run at load), which only a
// calibration on a GPU needs; so the CUDA backend and the kernels it times live in
// libtrainsim_calibrate_cuda.so, which this loads when a calibration asks for the GPU. Built with
// the CUDA backend only (TRAINSIM_HAVE_CUDA).
#ifndef TRAINSIM_CALIBRATE_CUDA_MODULE_H_
#define TRAINSIM_CALIBRATE_CUDA_MODULE_H_

#include <memory>
#include <string_view>

#include "calibrate/backend.h"

namespace trainsim::calibrate {

// The CUDA backend over GPUs 0..devices-1 timing `attention_kernel` ("mma.sync" or "wgmma"), from
// the module next to the program (../lib/trainsim/ from its folder, as installed) or in the build
// tree it was built in. Throws std::runtime_error naming the paths tried when the module cannot be
// loaded, and what the backend's constructor throws (cuda/cuda_backend.h).
std::unique_ptr<Backend> make_cuda_backend(int devices, std::string_view attention_kernel);

}  // namespace trainsim::calibrate

// The module's entry point: a new CudaBackend, owned by the caller.
extern "C" trainsim::calibrate::Backend* trainsim_calibrate_cuda_backend(int devices, bool wgmma);

#endif  // TRAINSIM_CALIBRATE_CUDA_MODULE_H_
