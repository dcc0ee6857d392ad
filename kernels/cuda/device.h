// The current CUDA device: what it is, and a guard that switches to another one for a scope.
#ifndef TRAINSIM_KERNELS_CUDA_DEVICE_H_
#define TRAINSIM_KERNELS_CUDA_DEVICE_H_

#include <cstddef>
#include <string>

namespace trainsim::kernels {

struct DeviceInfo {
  int index = 0;
  std::string name;
  int compute_major = 0;
  int compute_minor = 0;
  int multiprocessors = 0;
  size_t memory_bytes = 0;
};

// Properties of device `index`. Throws GpuError (no such device, no driver).
DeviceInfo device_info(int index);

// Index of the current device. Throws GpuError.
int current_device();

// Makes `index` the current device until destruction, then restores the previous one.
class DeviceGuard {
 public:
  explicit DeviceGuard(int index);
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_;
};

}  // namespace trainsim::kernels

#endif  // TRAINSIM_KERNELS_CUDA_DEVICE_H_
