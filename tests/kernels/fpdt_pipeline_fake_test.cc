// The FPDT pipeline's host logic (slots, prefetches, stream/event ordering, host syncs) on the fake
// CUDA runtime, whose deferred streams run in random orders: every mode must reproduce the chunked
// reference, for several schedules, shapes and two consecutive iterations.
#include <cstring>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "kernels/fpdt/pipeline.h"
#include "kernels/fpdt/sequence_io.h"
#include "kernels/reference/fpdt.h"
#include "tests/kernels/fake_cuda/fake_runtime.h"
#include "tests/kernels/gpu_test_util.h"

namespace trainsim::kernels {
namespace {

using testing::random_tensor;
using testing::relative_error;

// bf16 of random values, and the rounded values themselves.
std::vector<float> upload(DeviceBuffer<std::byte>& buffer, int64_t count, std::mt19937& rng) {
  std::vector<float> values = random_tensor<float>(count, rng);
  std::vector<uint16_t> bits(values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    bits[i] = testing::to_bits(values[i], DataType::kBFloat16);
    values[i] = testing::from_bits(bits[i], DataType::kBFloat16);
  }
  buffer.copy_from_host(
      std::span<const std::byte>(reinterpret_cast<const std::byte*>(bits.data()), buffer.bytes()));
  return values;
}

std::vector<float> download(const DeviceBuffer<std::byte>& buffer) {
  const std::vector<std::byte> raw = buffer.copy_to_host();
  std::vector<float> values(raw.size() / 2);
  for (size_t i = 0; i < values.size(); ++i) {
    uint16_t bits;
    std::memcpy(&bits, raw.data() + 2 * i, 2);
    values[i] = testing::from_bits(bits, DataType::kBFloat16);
  }
  return values;
}

void check_pipeline(const FpdtShape& shape, const FpdtOptions& options, uint32_t seed) {
  SCOPED_TRACE(::testing::Message() << "u " << shape.chunks() << " head_dim " << shape.head_dim
                                    << " schedule seed " << seed);
  fake_cuda::reset(seed);
  const AttentionShape whole = shape.whole();
  std::mt19937 rng(seed);
  DeviceSequenceIo io(shape, options.dtype);
  const std::vector<float> q = upload(io.q(), whole.q_elements(), rng);
  const std::vector<float> k = upload(io.k(), whole.kv_elements(), rng);
  const std::vector<float> v = upload(io.v(), whole.kv_elements(), rng);
  const std::vector<float> dout = upload(io.dout(), whole.q_elements(), rng);
  std::vector<float> out_ref(q.size()), lse_ref(static_cast<size_t>(whole.lse_elements()));
  reference::fpdt_forward<float>(shape, std::nullopt, {q, k, v}, out_ref, lse_ref);
  std::vector<float> dq_ref(q.size()), dk_ref(k.size()), dv_ref(v.size());
  reference::fpdt_backward<float>(shape, std::nullopt, {q, k, v, out_ref, lse_ref, dout}, dq_ref, dk_ref,
                                  dv_ref);

  FpdtAttention pipeline(shape, options);
  for (int iteration = 0; iteration < 2; ++iteration) {
    SCOPED_TRACE(::testing::Message() << "iteration " << iteration);
    io.out().fill_bytes_async(0xFF, nullptr);
    io.dq().fill_bytes_async(0xFF, nullptr);
    io.dk().fill_bytes_async(0xFF, nullptr);
    io.dv().fill_bytes_async(0xFF, nullptr);
    // The pipeline's streams do not synchronise with the default stream.
    ASSERT_EQ(cudaStreamSynchronize(nullptr), cudaSuccess);
    pipeline.forward(io);
    pipeline.backward(io);
    pipeline.synchronize();
    EXPECT_LT(relative_error(download(io.out()), out_ref), 1e-2);
    EXPECT_LT(relative_error(download(io.dq()), dq_ref), 1e-2);
    EXPECT_LT(relative_error(download(io.dk()), dk_ref), 1e-2);
    EXPECT_LT(relative_error(download(io.dv()), dv_ref), 1e-2);
  }
  EXPECT_GT(fake_cuda::operations_run(), 0U);
}

const std::vector<FpdtShape>& shapes() {
  static const std::vector<FpdtShape> all = {
      {1, 2, 1, 64, {20}},           // u = 1
      {1, 2, 2, 64, {16, 9, 23}},    // chunks of different lengths
      {2, 4, 2, 128, {8, 8, 8, 8}},  // GQA, batch 2, head_dim 128, u = 4
  };
  return all;
}

TEST(FpdtPipelineFake, OffloadWithEvents) {
  for (const FpdtShape& shape : shapes()) {
    uint32_t seed = 1;
    for (int schedule = 0; schedule < 12; ++schedule) {  // every priority order, and random ones
      check_pipeline(shape, {true, FpdtSync::kEvents, DataType::kBFloat16, std::nullopt}, seed++);
    }
  }
}

TEST(FpdtPipelineFake, OffloadWithHostSyncs) {
  uint32_t seed = 100;
  for (const FpdtShape& shape : shapes()) {
    for (int schedule = 0; schedule < 4; ++schedule) {
      check_pipeline(shape, {true, FpdtSync::kHostSyncs, DataType::kBFloat16, std::nullopt}, seed++);
    }
  }
}

TEST(FpdtPipelineFake, WithoutOffload) {
  uint32_t seed = 200;
  for (const FpdtShape& shape : shapes()) {
    check_pipeline(shape, {false, FpdtSync::kEvents, DataType::kBFloat16, std::nullopt}, seed++);
  }
}

TEST(FpdtPipelineFake, BackwardNeedsForward) {
  fake_cuda::reset(1);
  const FpdtShape shape{1, 1, 1, 64, {8, 8}};
  FpdtAttention pipeline(shape, {});
  DeviceSequenceIo io(shape, DataType::kBFloat16);
  EXPECT_THROW(pipeline.backward(io), std::logic_error);
}

TEST(FpdtPipelineFake, RejectsUnsupportedHeadDim) {
  EXPECT_THROW(FpdtAttention({1, 1, 1, 32, {8}}, {}), std::invalid_argument);
}

}  // namespace
}  // namespace trainsim::kernels
