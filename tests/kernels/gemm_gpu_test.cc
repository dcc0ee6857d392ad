// The cuBLASLt GEMM wrapper against the reference on the three layouts of a linear layer, bf16 and
// fp16 (16-bit and fp32 outputs, beta accumulation) and fp8 where the GPU has it. Skipped without a
// device; the support table is checked on the CPU.
#include <random>
#include <vector>

#include <cuda_fp8.h>
#include <gtest/gtest.h>

#include "kernels/cuda/device.h"
#include "kernels/cuda/stream.h"
#include "kernels/gemm/gemm.h"
#include "kernels/reference/gemm.h"
#include "tests/kernels/gpu_test_util.h"

namespace trainsim::kernels {
namespace {

using testing::download;
using testing::random_device_tensor;
using testing::relative_error;

void check_gemm(BlasLt& blas, const GemmShape& shape, DataType input, DataType output, float beta,
                uint32_t seed) {
  SCOPED_TRACE(::testing::Message() << shape.m << "x" << shape.n << "x" << shape.k << " ta "
                                    << shape.transpose_a << " tb " << shape.transpose_b << " "
                                    << name_of(input) << "->" << name_of(output) << " beta " << beta);
  std::mt19937 rng(seed);
  const auto a = random_device_tensor(shape.a_elements(), input, rng);
  const auto b = random_device_tensor(shape.b_elements(), input, rng);
  std::vector<float> expected(static_cast<size_t>(shape.c_elements()));
  std::vector<float> got;
  Stream stream;
  GemmPlan plan(blas, shape, {input, output});
  if (output == DataType::kFloat32) {
    const std::vector<float> c_values = testing::random_tensor<float>(shape.c_elements(), rng);
    DeviceBuffer<float> c = testing::upload(c_values);
    plan.run(a.device.data(), b.device.data(), c.data(), c.data(), 0.5F, beta, stream.get());
    stream.synchronize();
    got = c.copy_to_host();
    reference::gemm<float>(shape, 0.5, a.values, b.values, beta, c_values, expected);
  } else {
    const auto c = random_device_tensor(shape.c_elements(), output, rng);
    DeviceBuffer<uint16_t> d(static_cast<size_t>(shape.c_elements()));
    d.fill_bytes_async(0xFF, stream.get());
    plan.run(a.device.data(), b.device.data(), c.device.data(), d.data(), 0.5F, beta, stream.get());
    stream.synchronize();
    got = download(d, output);
    reference::gemm<float>(shape, 0.5, a.values, b.values, beta, c.values, expected);
  }
  EXPECT_LT(relative_error(got, expected), output == DataType::kFloat32 ? 1e-3 : 1e-2);
}

TEST(GemmGpu, LinearLayerLayouts) {
  TRAINSIM_SKIP_WITHOUT_GPU();
  BlasLt blas;
  const int64_t tokens = 384, in = 256, out = 320;
  uint32_t seed = 1;
  for (const DataType type : {DataType::kBFloat16, DataType::kFloat16}) {
    for (const GemmShape& shape : {linear_forward(tokens, in, out), linear_input_grad(tokens, in, out),
                                   linear_weight_grad(tokens, in, out), GemmShape{100, 36, 52, true, true}}) {
      check_gemm(blas, shape, type, type, 0.0F, seed++);
      check_gemm(blas, shape, type, type, 1.0F, seed++);
      check_gemm(blas, shape, type, DataType::kFloat32, 2.0F, seed++);  // fp32 gradient accumulation
    }
  }
}

TEST(GemmGpu, Fp8ForwardWhereSupported) {
  TRAINSIM_SKIP_WITHOUT_GPU();
  const DeviceInfo device = device_info(current_device());
  const GemmShape shape = linear_forward(256, 512, 384);
  const GemmTypes types{DataType::kFloat8E4M3, DataType::kBFloat16};
  if (!gemm_supported(shape, types, device.compute_major, device.compute_minor)) {
    GTEST_SKIP() << "fp8 GEMM needs compute capability 8.9+ (" << device.name << ")";
  }
  std::mt19937 rng(3);
  // fp8 inputs: values exactly representable in e4m3 (small multiples of 1/8).
  std::uniform_int_distribution<int> dist(-16, 16);
  auto make = [&](int64_t count, std::vector<float>& values) {
    std::vector<__nv_fp8_e4m3> bits(static_cast<size_t>(count));
    values.resize(bits.size());
    for (size_t i = 0; i < bits.size(); ++i) {
      int x = dist(rng);
      x = x == 0 ? 1 : x;
      bits[i] = __nv_fp8_e4m3(static_cast<float>(x) / 8.0F);
      values[i] = static_cast<float>(bits[i]);
    }
    DeviceBuffer<__nv_fp8_e4m3> buffer(bits.size());
    buffer.copy_from_host(bits);
    return buffer;
  };
  std::vector<float> a_values, b_values;
  DeviceBuffer<__nv_fp8_e4m3> a = make(shape.a_elements(), a_values);
  DeviceBuffer<__nv_fp8_e4m3> b = make(shape.b_elements(), b_values);
  DeviceBuffer<uint16_t> d(static_cast<size_t>(shape.c_elements()));
  BlasLt blas;
  Stream stream;
  d.fill_bytes_async(0xFF, stream.get());
  GemmPlan plan(blas, shape, types);
  plan.run(a.data(), b.data(), nullptr, d.data(), 1.0F, 0.0F, stream.get());
  stream.synchronize();
  std::vector<float> expected(static_cast<size_t>(shape.c_elements()));
  reference::gemm<float>(shape, 1.0, a_values, b_values, 0.0, {}, expected);
  EXPECT_LT(relative_error(download(d, DataType::kBFloat16), expected), 1e-2);
}

TEST(GemmSupport, Table) {
  const GemmShape forward = linear_forward(64, 128, 256);
  const GemmShape input_grad = linear_input_grad(64, 128, 256);
  EXPECT_TRUE(gemm_supported(forward, {DataType::kBFloat16, DataType::kBFloat16}, 8, 0));
  EXPECT_TRUE(gemm_supported(forward, {DataType::kFloat16, DataType::kFloat32}, 8, 0));
  EXPECT_FALSE(gemm_supported(forward, {DataType::kBFloat16, DataType::kFloat16}, 9, 0));
  EXPECT_TRUE(gemm_supported(forward, {DataType::kFloat8E4M3, DataType::kBFloat16}, 9, 0));
  EXPECT_FALSE(gemm_supported(forward, {DataType::kFloat8E4M3, DataType::kBFloat16}, 8, 0));
  EXPECT_FALSE(gemm_supported(input_grad, {DataType::kFloat8E4M3, DataType::kBFloat16}, 9, 0));
  EXPECT_FALSE(gemm_supported({0, 1, 1}, {DataType::kBFloat16, DataType::kBFloat16}, 9, 0));
}

}  // namespace
}  // namespace trainsim::kernels
