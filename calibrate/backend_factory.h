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

// The backend for `kind` over `devices` devices (default: every GPU of the node, or every logical
// CPU up to 8 for the CPU backend). Throws std::invalid_argument when `kind` is kCuda and this
// build has no CUDA backend or no device answers, or when `devices` is out of range; kernels'
// GpuError when the device fails while starting.
std::unique_ptr<Backend> make_backend(BackendKind kind, std::optional<int> devices);

}  // namespace trainsim::calibrate

#endif  // TRAINSIM_CALIBRATE_BACKEND_FACTORY_H_
