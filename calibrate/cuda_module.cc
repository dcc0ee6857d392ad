#include "calibrate/cuda_module.h"

#include <dlfcn.h>
#include <filesystem>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>

namespace trainsim::calibrate {
namespace {

using MakeBackend = Backend* (*)(int, bool);

// The module's entry point, loaded once; never unloaded (the CUDA libraries do not support it).
MakeBackend load_module() {
  static std::once_flag once;
  static MakeBackend entry = nullptr;
  static std::string failure;
  std::call_once(once, [] {
    // As installed: lib/trainsim/ beside the program's bin/; then where the build put it.
    std::vector<std::string> candidates;
    std::error_code error;
    const std::filesystem::path program = std::filesystem::canonical("/proc/self/exe", error);
    if (!error) {
      candidates.push_back(
          (program.parent_path() / ".." / TRAINSIM_CUDA_MODULE_INSTALL_PATH).lexically_normal().string());
    }
    candidates.emplace_back(TRAINSIM_CUDA_MODULE_BUILD_PATH);
    for (const std::string& path : candidates) {
      void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (handle == nullptr) {
        failure += fmt::format("\n  {}: {}", path, dlerror());
        continue;
      }
      entry = reinterpret_cast<MakeBackend>(dlsym(handle, "trainsim_calibrate_cuda_backend"));
      if (entry != nullptr) return;
      failure += fmt::format("\n  {}: no entry point trainsim_calibrate_cuda_backend", path);
    }
  });
  if (entry == nullptr) {
    throw std::runtime_error(
        "cannot load the CUDA backend's module (rebuild with tools/setup, or "
        "reinstall trainsim); tried:" +
        failure);
  }
  return entry;
}

}  // namespace

std::unique_ptr<Backend> make_cuda_backend(int devices, std::string_view attention_kernel) {
  return std::unique_ptr<Backend>(load_module()(devices, attention_kernel == "wgmma"));
}

}  // namespace trainsim::calibrate
