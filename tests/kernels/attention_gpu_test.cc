// The CUDA attention kernels against the CPU reference on random (never zero) inputs, outputs
// poisoned with NaN before each run: forward, backward and merge, bf16 and fp16, head_dim 64 and 128,
// causal and full, GQA, partial tiles, q_len != kv_len. Skipped without a device.
#include <cmath>
#include <limits>
#include <ostream>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "kernels/attention/attention_launch.h"
#include "kernels/cuda/stream.h"
#include "kernels/reference/attention.h"
#include "kernels/reference/merge.h"
#include "tests/kernels/gpu_test_util.h"

namespace trainsim::kernels {

// How GoogleTest prints the parameter in test names.
void PrintTo(DataType type, std::ostream* os) { *os << name_of(type); }

namespace {

using testing::download;
using testing::random_device_tensor;
using testing::random_tensor;
using testing::relative_error;
using testing::upload;

struct Case {
  AttentionShape shape;
  bool causal;
};

std::vector<Case> cases(int64_t head_dim) {
  return {
      {{1, 300, 300, 4, 2, head_dim}, true},   // an FPDT diagonal block with GQA, partial tiles
      {{2, 77, 333, 2, 2, head_dim}, false},   // an off-diagonal block, batch 2
      {{1, 200, 64, 3, 1, head_dim}, true},    // bottom-right causal: 136 rows see no key
      {{1, 513, 1000, 8, 1, head_dim}, true},  // multi-query, q_len < kv_len
  };
}

double tolerance(DataType type) { return type == DataType::kBFloat16 ? 1e-2 : 2e-3; }

void expect_lse_near(const std::vector<float>& lse, const std::vector<float>& expected) {
  for (size_t i = 0; i < lse.size(); ++i) {
    if (std::isinf(expected[i])) {
      ASSERT_EQ(lse[i], expected[i]) << "row " << i;
    } else {
      ASSERT_NEAR(lse[i], expected[i], 1e-3 * (1.0 + std::abs(expected[i]))) << "row " << i;
    }
  }
}

void check_forward(const Case& c, DataType type, uint32_t seed,
                   AttentionKernel kernel = AttentionKernel::kMmaSync) {
  SCOPED_TRACE(::testing::Message() << to_string(kernel) << ' ' << name_of(type) << " head_dim "
                                    << c.shape.head_dim << " q_len " << c.shape.q_len << " kv_len "
                                    << c.shape.kv_len << " causal " << c.causal);
  const AttentionShape& s = c.shape;
  std::mt19937 rng(seed);
  const auto q = random_device_tensor(s.q_elements(), type, rng);
  const auto k = random_device_tensor(s.kv_elements(), type, rng);
  const auto v = random_device_tensor(s.kv_elements(), type, rng);
  DeviceBuffer<uint16_t> out(static_cast<size_t>(s.q_elements()));
  DeviceBuffer<float> lse(static_cast<size_t>(s.lse_elements()));
  Stream stream;
  out.fill_bytes_async(0xFF, stream.get());
  lse.fill_bytes_async(0xFF, stream.get());
  const AttentionOptions options{c.causal, std::nullopt};
  attention_forward(make_forward_params(s, options, type, q.device.data(), k.device.data(), v.device.data(),
                                        out.data(), lse.data()),
                    stream.get(), kernel);
  stream.synchronize();

  std::vector<float> out_ref(static_cast<size_t>(s.q_elements())),
      lse_ref(static_cast<size_t>(s.lse_elements()));
  reference::attention_forward<float>(s, options, {q.values, k.values, v.values}, out_ref, lse_ref);
  EXPECT_LT(relative_error(download(out, type), out_ref), tolerance(type));
  expect_lse_near(lse.copy_to_host(), lse_ref);
}

void check_backward(const Case& c, DataType type, uint32_t seed,
                    AttentionKernel kernel = AttentionKernel::kMmaSync) {
  SCOPED_TRACE(::testing::Message() << to_string(kernel) << ' ' << name_of(type) << " head_dim "
                                    << c.shape.head_dim << " q_len " << c.shape.q_len << " kv_len "
                                    << c.shape.kv_len << " causal " << c.causal);
  const AttentionShape& s = c.shape;
  std::mt19937 rng(seed);
  const auto q = random_device_tensor(s.q_elements(), type, rng);
  const auto k = random_device_tensor(s.kv_elements(), type, rng);
  const auto v = random_device_tensor(s.kv_elements(), type, rng);
  const auto dout = random_device_tensor(s.q_elements(), type, rng);
  const AttentionOptions options{c.causal, std::nullopt};
  // out and lse from the reference; out rounded to the element type as a kernel stores it.
  std::vector<float> out_exact(static_cast<size_t>(s.q_elements())),
      lse_values(static_cast<size_t>(s.lse_elements()));
  reference::attention_forward<float>(s, options, {q.values, k.values, v.values}, out_exact, lse_values);
  std::vector<uint16_t> out_bits(out_exact.size());
  std::vector<float> out_values(out_exact.size());
  for (size_t i = 0; i < out_bits.size(); ++i) {
    out_bits[i] = testing::to_bits(out_exact[i], type);
    out_values[i] = testing::from_bits(out_bits[i], type);
  }
  DeviceBuffer<uint16_t> out(out_bits.size());
  out.copy_from_host(out_bits);
  DeviceBuffer<float> lse = upload(lse_values);
  // Accumulators start non-zero: the kernels add.
  const std::vector<float> dq_init = random_tensor<float>(s.q_elements(), rng);
  const std::vector<float> dkv_init = random_tensor<float>(s.kv_elements(), rng);
  DeviceBuffer<float> dq = upload(dq_init), dk = upload(dkv_init), dv = upload(dkv_init);
  const AttentionFwdParams fwd = make_forward_params(s, options, type, q.device.data(), k.device.data(),
                                                     v.device.data(), out.data(), lse.data());
  DeviceBuffer<float> delta(static_cast<size_t>(backward_delta_elements(fwd)));
  Stream stream;
  delta.fill_bytes_async(0xFF, stream.get());
  attention_backward(
      make_backward_params(fwd, dout.device.data(), dq.data(), dk.data(), dv.data(), delta.data()),
      stream.get(), kernel);
  stream.synchronize();

  std::vector<float> dq_ref(dq_init.size()), dk_ref(dkv_init.size()), dv_ref(dkv_init.size());
  reference::attention_backward<float>(s, options,
                                       {q.values, k.values, v.values, out_values, lse_values, dout.values},
                                       dq_ref, dk_ref, dv_ref);
  auto added = [](const DeviceBuffer<float>& acc, const std::vector<float>& init) {
    std::vector<float> d = acc.copy_to_host();
    for (size_t i = 0; i < d.size(); ++i) {
      d[i] -= init[i];
    }
    return d;
  };
  EXPECT_LT(relative_error(added(dq, dq_init), dq_ref), tolerance(type));
  EXPECT_LT(relative_error(added(dk, dkv_init), dk_ref), tolerance(type));
  EXPECT_LT(relative_error(added(dv, dkv_init), dv_ref), tolerance(type));
}

class AttentionGpu : public ::testing::TestWithParam<std::tuple<DataType, int>> {};

TEST_P(AttentionGpu, ForwardMatchesReference) {
  TRAINSIM_SKIP_WITHOUT_GPU();
  const auto [type, head_dim] = GetParam();
  uint32_t seed = 1;
  for (const Case& c : cases(head_dim)) {
    check_forward(c, type, seed++);
  }
}

// The sm_90a kernels, on H100/H200-class GPUs only.
#define TRAINSIM_SKIP_WITHOUT_WGMMA()                                      \
  if (!attention_kernel_available(AttentionKernel::kWgmma)) {              \
    GTEST_SKIP() << "the wgmma kernels need a compute capability 9.0 GPU"; \
  }

TEST_P(AttentionGpu, WgmmaForwardMatchesReference) {
  TRAINSIM_SKIP_WITHOUT_GPU();
  TRAINSIM_SKIP_WITHOUT_WGMMA();
  const auto [type, head_dim] = GetParam();
  uint32_t seed = 21;
  for (const Case& c : cases(head_dim)) {
    check_forward(c, type, seed++, AttentionKernel::kWgmma);
  }
}

TEST_P(AttentionGpu, WgmmaBackwardMatchesReference) {
  TRAINSIM_SKIP_WITHOUT_GPU();
  TRAINSIM_SKIP_WITHOUT_WGMMA();
  const auto [type, head_dim] = GetParam();
  uint32_t seed = 31;
  for (const Case& c : cases(head_dim)) {
    check_backward(c, type, seed++, AttentionKernel::kWgmma);
  }
}

TEST_P(AttentionGpu, BackwardMatchesReference) {
  TRAINSIM_SKIP_WITHOUT_GPU();
  const auto [type, head_dim] = GetParam();
  uint32_t seed = 11;
  for (const Case& c : cases(head_dim)) {
    check_backward(c, type, seed++);
  }
}

INSTANTIATE_TEST_SUITE_P(Kernels, AttentionGpu,
                         ::testing::Combine(::testing::Values(DataType::kBFloat16, DataType::kFloat16),
                                            ::testing::Values(64, 128)),
                         [](const ::testing::TestParamInfo<std::tuple<DataType, int>>& param_info) {
                           return std::string(name_of(std::get<0>(param_info.param))) + "_hdim" +
                                  std::to_string(std::get<1>(param_info.param));
                         });

TEST(AttentionGpuMerge, MatchesReference) {
  TRAINSIM_SKIP_WITHOUT_GPU();
  for (const bool first : {false, true}) {
    const AttentionRows rows{2, 333, 4, 128};
    std::mt19937 rng(first ? 5 : 6);
    const auto block_out = random_device_tensor(rows.out_elements(), DataType::kBFloat16, rng);
    std::vector<float> out_values = random_tensor<float>(rows.out_elements(), rng);
    std::vector<float> lse_values = random_tensor<float>(rows.lse_elements(), rng, 300.0);
    std::vector<float> block_lse_values = random_tensor<float>(rows.lse_elements(), rng, 300.0);
    lse_values[3] = -std::numeric_limits<float>::infinity();
    block_lse_values[4] = -std::numeric_limits<float>::infinity();
    DeviceBuffer<float> out = upload(out_values), lse = upload(lse_values),
                        block_lse = upload(block_lse_values);
    Stream stream;
    if (first) {  // the running result must not be read
      out.fill_bytes_async(0xFF, stream.get());
      lse.fill_bytes_async(0xFF, stream.get());
    }
    merge_attention(make_merge_params(rows, DataType::kBFloat16, first, out.data(), lse.data(),
                                      block_out.device.data(), block_lse.data()),
                    stream.get());
    stream.synchronize();
    reference::merge_attention<float>(rows, first, out_values, lse_values, block_out.values,
                                      block_lse_values);
    EXPECT_LT(relative_error(out.copy_to_host(), out_values), 1e-6);
    EXPECT_LT(relative_error(lse.copy_to_host(), lse_values), 1e-6);
  }
}

TEST(AttentionGpuChecks, RejectsUnsupportedParams) {
  AttentionFwdParams params = make_forward_params({1, 16, 16, 2, 2, 96}, {}, DataType::kBFloat16, nullptr,
                                                  nullptr, nullptr, nullptr, nullptr);
  EXPECT_THROW(check_supported(params), std::invalid_argument);  // head_dim 96, null pointers
  EXPECT_THROW(attention_forward(params, nullptr), std::invalid_argument);
}

}  // namespace
}  // namespace trainsim::kernels
