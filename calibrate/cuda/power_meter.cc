#include "calibrate/cuda/power_meter.h"

#include <dlfcn.h>
#include <stdexcept>

#include <fmt/format.h>

namespace trainsim::calibrate::cuda {
namespace {

// The part of NVML's C API used here (nvml.h, NVML API reference): every call returns an
// nvmlReturn_t, 0 for success; a device handle is an opaque pointer.
using NvmlReturn = int;
using NvmlDevice = void*;
using InitFn = NvmlReturn (*)();
using ShutdownFn = NvmlReturn (*)();
using HandleByPciFn = NvmlReturn (*)(const char*, NvmlDevice*);
using EnergyFn = NvmlReturn (*)(NvmlDevice, unsigned long long*);  // NOLINT(google-runtime-int): NVML's type
using LimitFn = NvmlReturn (*)(NvmlDevice, unsigned int*);
using ErrorStringFn = const char* (*)(NvmlReturn);

}  // namespace

struct PowerMeter::Library {
  void* handle = nullptr;
  ShutdownFn shutdown = nullptr;
  EnergyFn energy = nullptr;
  LimitFn limit = nullptr;
  ErrorStringFn error_string = nullptr;
  NvmlDevice device = nullptr;
  bool initialised = false;

  ~Library() {
    if (initialised) shutdown();
    if (handle != nullptr) dlclose(handle);
  }

  template <class F>
  F symbol(const char* name) const {
    void* address = dlsym(handle, name);
    if (address == nullptr) throw std::invalid_argument(fmt::format("NVML has no {}", name));
    return reinterpret_cast<F>(address);  // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast): dlsym
  }

  void check(NvmlReturn code, const char* call) const {
    if (code != 0) throw std::invalid_argument(fmt::format("NVML {} failed: {}", call, error_string(code)));
  }
};

PowerMeter::PowerMeter(const std::string& pci_bus_id) : library_(std::make_unique<Library>()) {
  Library& l = *library_;
  l.handle = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (l.handle == nullptr) {
    throw std::invalid_argument(
        fmt::format("cannot load NVML (libnvidia-ml.so.1, from the driver): {}", dlerror()));
  }
  l.error_string = l.symbol<ErrorStringFn>("nvmlErrorString");
  l.shutdown = l.symbol<ShutdownFn>("nvmlShutdown");
  l.check(l.symbol<InitFn>("nvmlInit_v2")(), "nvmlInit_v2");
  l.initialised = true;
  l.check(l.symbol<HandleByPciFn>("nvmlDeviceGetHandleByPciBusId_v2")(pci_bus_id.c_str(), &l.device),
          "nvmlDeviceGetHandleByPciBusId_v2");
  l.energy = l.symbol<EnergyFn>("nvmlDeviceGetTotalEnergyConsumption");
  l.limit = l.symbol<LimitFn>("nvmlDeviceGetEnforcedPowerLimit");
  energy_j();  // a GPU before Volta has no counter: say so now
}

PowerMeter::~PowerMeter() = default;

double PowerMeter::energy_j() const {
  unsigned long long millijoules = 0;  // NOLINT(google-runtime-int): NVML's type
  library_->check(library_->energy(library_->device, &millijoules), "nvmlDeviceGetTotalEnergyConsumption");
  return static_cast<double>(millijoules) / 1e3;
}

double PowerMeter::limit_w() const {
  unsigned int milliwatts = 0;
  library_->check(library_->limit(library_->device, &milliwatts), "nvmlDeviceGetEnforcedPowerLimit");
  return static_cast<double>(milliwatts) / 1e3;
}

}  // namespace trainsim::calibrate::cuda
