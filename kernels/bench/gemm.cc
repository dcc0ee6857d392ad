// The cuBLASLt GEMM section of the bench (sections.h).
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <cuda_fp8.h>
#include <cuda_runtime_api.h>

#include "kernels/bench/sections.h"
#include "kernels/bench/tensors.h"
#include "kernels/bench/timing.h"
#include "kernels/bench/verify.h"
#include "kernels/cuda/check.h"
#include "kernels/cuda/device_buffer.h"
#include "kernels/cuda/stream.h"

namespace trainsim::kernels::bench {

void bench_gemm(Report& report, const Ceilings& ceilings, const std::string& name, const GemmShape& shape,
                const GemmTypes& types, uint64_t seed) {
  BlasLt blas;
  Stream stream;
  DeviceBuffer<uint16_t> d(static_cast<size_t>(shape.c_elements()));
  std::vector<float> a_values;
  std::vector<float> b_values;
  DeviceBuffer<std::byte> a;
  DeviceBuffer<std::byte> b;
  if (types.input == DataType::kFloat8E4M3) {
    auto make = [](int64_t count, uint64_t s, std::vector<float>& values) {
      const Tensor16 source = random_tensor16(count, DataType::kBFloat16, s);
      std::vector<__nv_fp8_e4m3> bits(source.values.size());
      values.resize(bits.size());
      for (size_t i = 0; i < bits.size(); ++i) {
        bits[i] = __nv_fp8_e4m3(source.values[i]);
        values[i] = static_cast<float>(bits[i]);
      }
      DeviceBuffer<std::byte> buffer(bits.size());
      CUDA_CHECK(cudaMemcpy(buffer.data(), bits.data(), bits.size(), cudaMemcpyHostToDevice));
      return buffer;
    };
    a = make(shape.a_elements(), seed, a_values);
    b = make(shape.b_elements(), seed + 1, b_values);
  } else {
    auto make = [&](int64_t count, uint64_t s, std::vector<float>& values) {
      Tensor16 t = random_tensor16(count, types.input, s);
      values = std::move(t.values);
      DeviceBuffer<std::byte> buffer(static_cast<size_t>(count) * 2);
      CUDA_CHECK(cudaMemcpy(buffer.data(), t.device.data(), buffer.bytes(), cudaMemcpyDeviceToDevice));
      return buffer;
    };
    a = make(shape.a_elements(), seed, a_values);
    b = make(shape.b_elements(), seed + 1, b_values);
  }
  GemmPlan plan(blas, shape, types);
  d.fill_bytes_async(0xFF, stream.get());
  plan.run(a.data(), b.data(), nullptr, d.data(), 1.0F, 0.0F, stream.get());
  stream.synchronize();
  const Check check = check_gemm(shape, a_values, b_values,
                                 download16(d.data(), shape.c_elements(), types.output), 16, seed, 1e-2);
  const Timing t = time_on_stream(stream.get(), 3, 10, [&] {
    plan.run(a.data(), b.data(), nullptr, d.data(), 1.0F, 0.0F, stream.get());
  });
  const double rate = tflops(shape.flops(), t.median_ms);
  std::ostringstream desc;
  desc << shape.m << "x" << shape.n << "x" << shape.k << " " << name_of(types.input) << "->"
       << name_of(types.output);
  report.add(
      {"GEMM " + name, desc.str(), t.median_ms, rate, 0.0, rate / ceilings.gemm_tflops, check.summary()});
}

}  // namespace trainsim::kernels::bench
