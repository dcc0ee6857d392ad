#include "tests/calibrate/fake_backend.h"

#include <stdexcept>

#include "calibrate/collective_kinds.h"

namespace trainsim::calibrate::testing {

FakeBackend::FakeBackend(int devices) {
  facts_.backend = "cuda";
  facts_.device_name = "NVIDIA Fake GPU";
  facts_.devices = devices;
  facts_.multiprocessors = 132;
  facts_.clock_hz = 1.98e9;
  facts_.memory_bytes = 80.0 * (1ULL << 30);
  facts_.cache_bytes = 50.0 * (1ULL << 20);
  facts_.host_memory_bytes = 2e12;
  facts_.pcie_generation = 5;
  facts_.context_bytes = kContextBytes;
  facts_.driver_version = "570.124.06";
  facts_.attention_kernel = "mma.sync";
  facts_.runtime_version = "12.8";
  facts_.blas_version = "12.8.4";
  facts_.collectives_version = "2.26.2";
  facts_.host_name = "node01";
  facts_.host_cpu = "Fake CPU";
  capabilities_.scale = DeviceScale::kGpu;
  capabilities_.gemm_dtypes = {config::Dtype::kBf16, config::Dtype::kFp16, config::Dtype::kFp8};
  capabilities_.attention_dtypes = {config::Dtype::kBf16, config::Dtype::kFp16};
  capabilities_.attention_head_dims = {64, 128};
  capabilities_.max_case_flops = 1e14;
}

// Repetitions spread by +-1% around `seconds` (median exactly `seconds`).
std::vector<double> FakeBackend::repeat(double seconds, const TimingPolicy& policy) {
  ++calls_;
  std::vector<double> out;
  for (int i = 0; i < policy.repetitions; ++i) {
    const double spread = policy.repetitions > 1 ? 0.02 * i / (policy.repetitions - 1) - 0.01 : 0.0;
    out.push_back(seconds * (1.0 + spread));
  }
  return out;
}

std::vector<double> FakeBackend::time_gemm(const GemmCase& c, const TimingPolicy& policy) {
  return repeat(c.flops() / kGemmFlopsPerS, policy);
}

std::vector<double> FakeBackend::time_attention(const AttentionCase& c, const TimingPolicy& policy) {
  return repeat(c.flops() / kAttentionFlopsPerS, policy);
}

std::vector<double> FakeBackend::time_collective(const CollectiveCase& c, const TimingPolicy& policy) {
  if (c.ranks > facts_.devices) throw std::invalid_argument("more ranks than devices");
  const double factor = bus_bandwidth_factor(c.kind, c.ranks);
  return repeat(kCollectiveLatencyS + c.bytes * factor / kBusBytesPerS, policy);
}

std::vector<double> FakeBackend::time_copy(const CopyCase& c, const TimingPolicy& policy) {
  return repeat(kCopyLatencyS + c.bytes * c.concurrent / kCopyBytesPerS, policy);
}

std::vector<double> FakeBackend::time_device_copy(double bytes, const TimingPolicy& policy) {
  return repeat(2.0 * bytes / kDeviceCopyBytesPerS, policy);
}

OverheadSamples FakeBackend::time_overheads(const TimingPolicy& policy) {
  return {repeat(kLaunchS, policy), repeat(kHostSyncS, policy), repeat(20e-6, policy)};
}

InterferenceSamples FakeBackend::time_interference(const GemmCase& gemm, const CollectiveCase&,
                                                   const TimingPolicy& policy) {
  const double alone = gemm.flops() / kGemmFlopsPerS;
  return {repeat(alone, policy), repeat(alone * (1 + kSlowdown), policy), true};
}

PowerSamples FakeBackend::measure_power(const GemmCase&, double, double) { return kPower; }

}  // namespace trainsim::calibrate::testing
