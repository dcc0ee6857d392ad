// Choosing the backend of a calibration run: the GPU when this build has the CUDA backend and a
// device answers, the CPU references otherwise.
#ifndef TRAINSIM_CALIBRATE_BACKEND_FACTORY_H_
#define TRAINSIM_CALIBRATE_BACKEND_FACTORY_H_

#include <memory>
#include <optional>
#include <string_view>

#include "calibrate/backend.h"

namespace trainsim::calibrate {

enum class BackendKind { kAuto, kCuda, kCpu };

// "auto", "cuda" or "cpu"; nullopt otherwise.
std::optional<BackendKind> parse_backend_kind(std::string_view text);

// True when this build contains the CUDA backend (TRAINSIM_HAVE_CUDA).
bool cuda_backend_built();

// The attention kernels the CUDA backend times: "mma.sync" (sm_80 and later, the default) or
// "wgmma" (compute capability 9.0). The CPU backend times the CPU reference.
inline constexpr std::string_view kDefaultAttentionKernel = "mma.sync";

// The backend for `kind` over `devices` devices (default: every GPU of the node, or every logical
// CPU up to 8 for the CPU backend), timing `attention_kernel`. Throws std::invalid_argument when
// `kind` is kCuda and this build has no CUDA backend or no device answers, when `devices` is out of
// range, or when `attention_kernel` is unknown, not the default on the CPU backend, or not runnable on
// the device; kernels' GpuError when the device fails while starting.
std::unique_ptr<Backend> make_backend(BackendKind kind, std::optional<int> devices,
                                      std::string_view attention_kernel = kDefaultAttentionKernel);

}  // namespace trainsim::calibrate

#endif  // TRAINSIM_CALIBRATE_BACKEND_FACTORY_H_
