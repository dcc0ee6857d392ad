// One GPU's board energy counter, read through NVML. NVML ships with the NVIDIA driver, not with the
// CUDA toolkit, so it is loaded at run time (libnvidia-ml.so.1): a build machine needs neither its
// header nor its library, and a machine without it only loses the power measurement.
#ifndef TRAINSIM_CALIBRATE_CUDA_POWER_METER_H_
#define TRAINSIM_CALIBRATE_CUDA_POWER_METER_H_

#include <memory>
#include <string>

namespace trainsim::calibrate::cuda {

class PowerMeter {
 public:
  // The meter of the GPU at PCI bus id `pci_bus_id` ("0000:18:00.0", as cudaDeviceGetPCIBusId gives
  // it). Throws std::invalid_argument saying why when NVML is missing, fails, or the GPU has no
  // energy counter (before Volta).
  explicit PowerMeter(const std::string& pci_bus_id);
  ~PowerMeter();
  PowerMeter(const PowerMeter&) = delete;
  PowerMeter& operator=(const PowerMeter&) = delete;

  // The board's energy since the driver loaded, in joules (NVML updates it every 20-100 ms).
  double energy_j() const;
  // The power limit the driver enforces, in watts.
  double limit_w() const;

 private:
  struct Library;
  std::unique_ptr<Library> library_;
};

}  // namespace trainsim::calibrate::cuda

#endif  // TRAINSIM_CALIBRATE_CUDA_POWER_METER_H_
