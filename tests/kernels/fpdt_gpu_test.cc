// The FPDT pipeline on the GPU against the chunked reference, in every mode (offload with events,
// offload with DeepSpeed's host syncs, no offload), two iterations each. Skipped without a device.
#include <random>
#include <vector>

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include "kernels/attention/attention_launch.h"
#include "kernels/fpdt/pipeline.h"
#include "kernels/fpdt/sequence_io.h"
#include "kernels/reference/fpdt.h"
#include "tests/kernels/gpu_test_util.h"

namespace trainsim::kernels {
namespace {

using testing::relative_error;

std::vector<float> fill(DeviceBuffer<std::byte>& buffer, int64_t count, std::mt19937& rng) {
  std::vector<float> values = testing::random_tensor<float>(count, rng);
  std::vector<uint16_t> bits(values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    bits[i] = testing::to_bits(values[i], DataType::kBFloat16);
    values[i] = testing::from_bits(bits[i], DataType::kBFloat16);
  }
  CUDA_CHECK(cudaMemcpy(buffer.data(), bits.data(), buffer.bytes(), cudaMemcpyHostToDevice));
  return values;
}

std::vector<float> read(const DeviceBuffer<std::byte>& buffer) {
  std::vector<uint16_t> bits(buffer.bytes() / 2);
  CUDA_CHECK(cudaMemcpy(bits.data(), buffer.data(), buffer.bytes(), cudaMemcpyDeviceToHost));
  std::vector<float> values(bits.size());
  for (size_t i = 0; i < bits.size(); ++i) {
    values[i] = testing::from_bits(bits[i], DataType::kBFloat16);
  }
  return values;
}

void check(const FpdtShape& shape, const FpdtOptions& options, uint32_t seed) {
  SCOPED_TRACE(::testing::Message() << "u " << shape.chunks() << " offload " << options.offload
                                    << " host syncs " << (options.sync == FpdtSync::kHostSyncs));
  const AttentionShape whole = shape.whole();
  std::mt19937 rng(seed);
  DeviceSequenceIo io(shape, options.dtype);
  const std::vector<float> q = fill(io.q(), whole.q_elements(), rng);
  const std::vector<float> k = fill(io.k(), whole.kv_elements(), rng);
  const std::vector<float> v = fill(io.v(), whole.kv_elements(), rng);
  const std::vector<float> dout = fill(io.dout(), whole.q_elements(), rng);
  std::vector<float> out_ref(q.size()), lse_ref(static_cast<size_t>(whole.lse_elements()));
  reference::fpdt_forward<float>(shape, std::nullopt, {q, k, v}, out_ref, lse_ref);
  std::vector<float> dq_ref(q.size()), dk_ref(k.size()), dv_ref(v.size());
  reference::fpdt_backward<float>(shape, std::nullopt, {q, k, v, out_ref, lse_ref, dout}, dq_ref, dk_ref,
                                  dv_ref);

  FpdtAttention pipeline(shape, options);
  for (int iteration = 0; iteration < 2; ++iteration) {
    for (DeviceBuffer<std::byte>* poisoned : {&io.out(), &io.dq(), &io.dk(), &io.dv()}) {
      CUDA_CHECK(cudaMemset(poisoned->data(), 0xFF, poisoned->bytes()));
    }
    CUDA_CHECK(cudaDeviceSynchronize());
    pipeline.forward(io);
    pipeline.backward(io);
    pipeline.synchronize();
    EXPECT_LT(relative_error(read(io.out()), out_ref), 1e-2);
    EXPECT_LT(relative_error(read(io.dq()), dq_ref), 1e-2);
    EXPECT_LT(relative_error(read(io.dk()), dk_ref), 1e-2);
    EXPECT_LT(relative_error(read(io.dv()), dv_ref), 1e-2);
  }
}

const std::vector<FpdtShape> kShapes = {
    {1, 4, 2, 128, {256, 256, 256}}, {2, 2, 2, 64, {100, 37, 300}}, {1, 2, 1, 128, {200}}};

TEST(FpdtGpu, AllModesMatchTheChunkedReference) {
  TRAINSIM_SKIP_WITHOUT_GPU();
  uint32_t seed = 1;
  for (const FpdtShape& shape : kShapes) {
    for (const FpdtOptions& options :
         {FpdtOptions{true, FpdtSync::kEvents, DataType::kBFloat16, std::nullopt},
          FpdtOptions{true, FpdtSync::kHostSyncs, DataType::kBFloat16, std::nullopt},
          FpdtOptions{false, FpdtSync::kEvents, DataType::kBFloat16, std::nullopt}}) {
      check(shape, options, seed++);
    }
  }
}

TEST(FpdtGpu, WgmmaBlocksMatchTheChunkedReference) {
  TRAINSIM_SKIP_WITHOUT_GPU();
  if (!attention_kernel_available(AttentionKernel::kWgmma)) {
    GTEST_SKIP() << "the wgmma kernels need a compute capability 9.0 GPU";
  }
  uint32_t seed = 100;
  for (const FpdtShape& shape : kShapes) {
    check(shape, {true, FpdtSync::kEvents, DataType::kBFloat16, std::nullopt, AttentionKernel::kWgmma},
          seed++);
  }
}

}  // namespace
}  // namespace trainsim::kernels
