#include "calibrate/cuda/cuda_facts.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <string>

#include <cublasLt.h>
#include <cuda_runtime_api.h>
#include <fmt/format.h>
#include <nccl.h>

#include "calibrate/cpu/cpu_facts.h"
#include "kernels/cuda/check.h"

namespace trainsim::calibrate::cuda {
namespace {

std::string driver_version() {
  std::ifstream in("/proc/driver/nvidia/version");
  std::string line;
  std::getline(in, line);
  std::smatch m;
  if (std::regex_search(line, m, std::regex(R"(Kernel Module(?: for \S+)?\s+(\d+\.\d+(?:\.\d+)?))")))
    return m[1];
  int version = 0;
  if (cudaDriverGetVersion(&version) == cudaSuccess && version > 0) {
    return fmt::format("supporting CUDA {}.{}", version / 1000, version % 1000 / 10);
  }
  return "";
}

// PCIe generation from the link speed sysfs reports for the device ("32.0 GT/s PCIe" -> 5).
int pcie_generation(int device) {
  std::array<char, 32> bus{};
  if (cudaDeviceGetPCIBusId(bus.data(), static_cast<int>(bus.size()), device) != cudaSuccess) return 0;
  std::string id(bus.data());
  std::transform(id.begin(), id.end(), id.begin(), [](unsigned char c) { return std::tolower(c); });
  if (id.size() > 12) id = id.substr(id.size() - 12);  // "0000:07:00.0"
  std::ifstream in("/sys/bus/pci/devices/" + id + "/max_link_speed");
  std::string speed;
  std::getline(in, speed);
  const double gts = std::strtod(speed.c_str(), nullptr);
  int generation = 0;
  for (const double rate : {2.5, 5.0, 8.0, 16.0, 32.0, 64.0}) {
    ++generation;
    if (gts > 0 && std::abs(gts - rate) < 0.1) return generation;
  }
  return 0;
}

}  // namespace

std::pair<int, int> compute_capability() {
  int major = 0;
  int minor = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0));
  CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, 0));
  return {major, minor};
}

DeviceFacts cuda_facts(int devices) {
  cudaDeviceProp prop{};
  CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  DeviceFacts f;
  f.backend = "cuda";
  f.device_name = prop.name;
  f.devices = devices;
  f.multiprocessors = prop.multiProcessorCount;
  int clock_khz = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0));
  f.clock_hz = 1e3 * clock_khz;
  f.memory_bytes = static_cast<double>(prop.totalGlobalMem);
  f.cache_bytes = prop.l2CacheSize;
  f.pcie_generation = pcie_generation(0);
  f.driver_version = driver_version();
  int runtime = 0;
  CUDA_CHECK(cudaRuntimeGetVersion(&runtime));
  f.runtime_version = fmt::format("{}.{}", runtime / 1000, runtime % 1000 / 10);
  const size_t blas = cublasLtGetVersion();
  f.blas_version = fmt::format("{}.{}.{}", blas / 10000, blas / 100 % 100, blas % 100);
  int nccl = 0;
  NCCL_CHECK(ncclGetVersion(&nccl));
  f.collectives_version = fmt::format("{}.{}.{}", nccl / 10000, nccl / 100 % 100, nccl % 100);
  const cpu::HostFacts host = cpu::host_facts();
  f.host_memory_bytes = host.memory_bytes;
  f.host_name = host.host_name;
  f.host_cpu = host.cpu_name;
  return f;
}

}  // namespace trainsim::calibrate::cuda
