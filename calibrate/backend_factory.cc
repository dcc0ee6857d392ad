#include "calibrate/backend_factory.h"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <thread>

#include <fmt/format.h>

#include "calibrate/cpu/cpu_backend.h"
#include "kernels/device_query.h"
#if TRAINSIM_HAVE_CUDA
#include "calibrate/cuda_module.h"
#endif

namespace trainsim::calibrate {

std::optional<BackendKind> parse_backend_kind(std::string_view text) {
  if (text == "auto") return BackendKind::kAuto;
  if (text == "cuda") return BackendKind::kCuda;
  if (text == "cpu") return BackendKind::kCpu;
  return std::nullopt;
}

bool cuda_backend_built() { return TRAINSIM_HAVE_CUDA != 0; }

std::unique_ptr<Backend> make_backend(BackendKind kind, std::optional<int> devices,
                                      std::string_view attention_kernel) {
  if (attention_kernel != "mma.sync" && attention_kernel != "wgmma") {
    throw std::invalid_argument(
        fmt::format("--attention-kernel {}: expected mma.sync or wgmma", std::string(attention_kernel)));
  }
  const int gpus = kernels::cuda_device_count();
  const bool use_cuda =
      kind == BackendKind::kCuda || (kind == BackendKind::kAuto && cuda_backend_built() && gpus > 0);
  if (use_cuda) {
    if (!cuda_backend_built()) {
      throw std::invalid_argument(
          "--backend cuda: this trainsim was built without CUDA (TRAINSIM_ENABLE_CUDA)");
    }
    if (gpus == 0) throw std::invalid_argument("--backend cuda: no CUDA device answers (cudaGetDeviceCount)");
#if TRAINSIM_HAVE_CUDA
    return make_cuda_backend(devices.value_or(gpus), attention_kernel);
#endif
  }
  if (attention_kernel != kDefaultAttentionKernel) {
    throw std::invalid_argument(fmt::format(
        "--attention-kernel {}: the CPU backend times the CPU reference; the option chooses among the "
        "CUDA backend's kernels",
        std::string(attention_kernel)));
  }
  const int cpus = static_cast<int>(std::max(1U, std::thread::hardware_concurrency()));
  return std::make_unique<cpu::CpuBackend>(devices.value_or(std::min(cpus, 8)));
}

}  // namespace trainsim::calibrate
