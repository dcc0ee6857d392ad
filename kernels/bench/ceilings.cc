// The ceilings of a bench run and the pinned host links (sections.h).
#include <cstddef>
#include <cstdint>

#include <cuda_runtime_api.h>

#include "kernels/bench/sections.h"
#include "kernels/bench/tensors.h"
#include "kernels/bench/timing.h"
#include "kernels/bench/verify.h"
#include "kernels/cuda/check.h"
#include "kernels/cuda/device_buffer.h"
#include "kernels/cuda/pinned_buffer.h"
#include "kernels/cuda/stream.h"

namespace trainsim::kernels::bench {

double measure_gemm_ceiling(Report& report, uint64_t seed) {
  const GemmShape shape{8192, 8192, 8192, false, true};
  const Tensor16 a = random_tensor16(shape.a_elements(), DataType::kBFloat16, seed);
  const Tensor16 b = random_tensor16(shape.b_elements(), DataType::kBFloat16, seed + 1);
  DeviceBuffer<uint16_t> d(static_cast<size_t>(shape.c_elements()));
  BlasLt blas;
  GemmPlan plan(blas, shape, {DataType::kBFloat16, DataType::kBFloat16});
  Stream stream;
  d.fill_bytes_async(0xFF, stream.get());
  plan.run(a.device.data(), b.device.data(), nullptr, d.data(), 1.0F, 0.0F, stream.get());
  stream.synchronize();
  const Check check =
      check_gemm(shape, a.values, b.values, download16(d.data(), shape.c_elements(), DataType::kBFloat16), 16,
                 seed, kBf16Tolerance);
  const Timing t = time_on_stream(stream.get(), 5, 20, [&] {
    plan.run(a.device.data(), b.device.data(), nullptr, d.data(), 1.0F, 0.0F, stream.get());
  });
  const double rate = tflops(shape.flops(), t.median_ms);
  report.add(
      {"ceiling: cuBLASLt GEMM bf16", "8192x8192x8192 (X·Wᵀ)", t.median_ms, rate, 0.0, 1.0, check.summary()});
  return rate;
}

// The bandwidth ceiling: a 2 GiB device-to-device copy, counting bytes read and written.
double measure_copy_ceiling(Report& report) {
  const size_t bytes = size_t{1} << 31;
  DeviceBuffer<std::byte> src(bytes), dst(bytes);
  Stream stream;
  const Timing t = time_on_stream(stream.get(), 3, 20, [&] {
    CUDA_CHECK(cudaMemcpyAsync(dst.data(), src.data(), bytes, cudaMemcpyDeviceToDevice, stream.get()));
  });
  const double gbps = 2.0 * static_cast<double>(bytes) / (t.median_ms * 1e6);
  report.add({"ceiling: device copy", "2 GiB D2D (read + write)", t.median_ms, 0.0, gbps, 1.0, "skipped"});
  return gbps;
}

// Pinned host <-> device bandwidth, what FPDT's offload rides on (no ceiling fraction).
void measure_host_links(Report& report) {
  const size_t bytes = size_t{1} << 30;
  PinnedBuffer<std::byte> host(bytes);
  DeviceBuffer<std::byte> device(bytes);
  Stream stream;
  for (const bool to_device : {true, false}) {
    const Timing t = time_on_stream(stream.get(), 1, 5, [&] {
      CUDA_CHECK(cudaMemcpyAsync(to_device ? static_cast<void*>(device.data()) : host.data(),
                                 to_device ? static_cast<const void*>(host.data()) : device.data(), bytes,
                                 cudaMemcpyDefault, stream.get()));
    });
    report.add({to_device ? "pinned H2D copy" : "pinned D2H copy", "1 GiB", t.median_ms, 0.0,
                static_cast<double>(bytes) / (t.median_ms * 1e6), 0.0, "skipped"});
  }
}

}  // namespace trainsim::kernels::bench
