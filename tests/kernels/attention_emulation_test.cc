// The CUDA attention kernels' device code, run on the CPU emulator (tests/kernels/emulation) and
// compared with the CPU reference: forward, backward (delta + main kernel) and merge, bf16 and
// fp16, head_dim 64 and 128, causal and full, GQA, partial tiles, q_len != kv_len. Outputs start
// poisoned (NaN) and live between guard zones, so unwritten and out-of-bounds elements fail.
// clang-format off
#include "tests/kernels/emulation/emulator.h"  // first: it replaces the CUDA built-ins
// clang-format on

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "kernels/attention/attention_config.cuh"
#include "kernels/attention/attention_launch.h"
#include "kernels/attention/merge_kernel.cuh"
#include "kernels/reference/attention.h"
#include "kernels/reference/merge.h"
#include "tests/kernels/emulation/device_tensor.h"
#include "tests/kernels/test_util.h"

namespace trainsim::kernels {
namespace {

using emulation::GuardedTensor;
using testing::random_tensor;
using testing::relative_error;

struct Case {
  AttentionShape shape;
  bool causal;
};

// Inputs rounded to the element type, with their exact float values for the reference.
template <typename Element>
struct Rounded {
  GuardedTensor<Element> device;
  std::vector<float> values;
};

template <typename Element>
Rounded<Element> rounded(int64_t count, std::mt19937& rng, double scale = 1.0) {
  Rounded<Element> r{GuardedTensor<Element>(count), random_tensor<float>(count, rng, scale)};
  for (int64_t i = 0; i < count; ++i) {
    r.device[i] = ElementTraits<Element>::from_float(r.values[i]);
    r.values[i] = ElementTraits<Element>::to_float(r.device[i]);
  }
  return r;
}

template <typename Element>
std::vector<float> to_floats(const GuardedTensor<Element>& t) {
  std::vector<float> values(static_cast<size_t>(t.size()));
  for (int64_t i = 0; i < t.size(); ++i) {
    values[i] = ElementTraits<Element>::to_float(t[i]);
  }
  return values;
}

template <typename T>
std::vector<float> floats(const GuardedTensor<T>& t) {
  return std::vector<float>(t.data(), t.data() + t.size());
}

template <typename Element>
double tolerance() {
  return std::is_same_v<Element, __nv_bfloat16> ? 1e-2 : 2e-3;
}

// lse agrees to `tol` (absolute, relative to 1 + |lse|), including -inf rows.
void expect_lse_near(const std::vector<float>& lse, const std::vector<float>& expected, double tol) {
  for (size_t i = 0; i < lse.size(); ++i) {
    if (std::isinf(expected[i])) {
      EXPECT_EQ(lse[i], expected[i]) << "row " << i;
    } else {
      EXPECT_NEAR(lse[i], expected[i], tol * (1.0 + std::abs(expected[i]))) << "row " << i;
    }
  }
}

// Kernel under test: the mma.sync one (sm_80 and later) or the wgmma one (sm_90a).
enum class Kernel { kMmaSync, kWgmma };

template <typename Element, int kHeadDim>
void check_forward(const Case& c, uint32_t seed, Kernel kernel = Kernel::kMmaSync) {
  AttentionShape shape = c.shape;
  shape.head_dim = kHeadDim;
  std::mt19937 rng(seed);
  emulation::clear_globals();
  auto q = rounded<Element>(shape.q_elements(), rng);
  auto k = rounded<Element>(shape.kv_elements(), rng);
  auto v = rounded<Element>(shape.kv_elements(), rng);
  GuardedTensor<Element> out(shape.q_elements());
  GuardedTensor<float> lse(shape.lse_elements());
  const AttentionOptions options{c.causal, std::nullopt};
  const AttentionFwdParams params =
      make_forward_params(shape, options, ElementTraits<Element>::kType, q.device.data(), k.device.data(),
                          v.device.data(), out.data(), lse.data());
  check_supported(params);
  if (kernel == Kernel::kWgmma) {
    using Traits = attention_impl::FwdWgmmaConfig<kHeadDim>;
    emulation::launch(
        attention_impl::fwd_grid<Traits>(params), Traits::kThreads, Traits::kSmemBytes,
        [&] { attention_impl::attention_fwd_wgmma_kernel<Element, Traits>(params); }, seed);
  } else {
    using Traits = attention_impl::FwdConfig<kHeadDim>;
    emulation::launch(
        attention_impl::fwd_grid<Traits>(params), Traits::kThreads, Traits::kSmemBytes,
        [&] { attention_impl::attention_fwd_kernel<Element, Traits>(params); }, seed);
  }

  std::vector<float> out_ref(static_cast<size_t>(shape.q_elements()));
  std::vector<float> lse_ref(static_cast<size_t>(shape.lse_elements()));
  reference::attention_forward<float>(shape, options, {q.values, k.values, v.values}, out_ref, lse_ref);
  EXPECT_LT(relative_error(to_floats(out), out_ref), tolerance<Element>());
  expect_lse_near(floats(lse), lse_ref, 1e-3);
  EXPECT_TRUE(out.guards_intact());
  EXPECT_TRUE(lse.guards_intact());
}

template <typename Element, int kHeadDim>
void check_backward(const Case& c, uint32_t seed, Kernel kernel = Kernel::kMmaSync) {
  AttentionShape shape = c.shape;
  shape.head_dim = kHeadDim;
  std::mt19937 rng(seed);
  emulation::clear_globals();
  auto q = rounded<Element>(shape.q_elements(), rng);
  auto k = rounded<Element>(shape.kv_elements(), rng);
  auto v = rounded<Element>(shape.kv_elements(), rng);
  auto dout = rounded<Element>(shape.q_elements(), rng);
  const AttentionOptions options{c.causal, std::nullopt};
  // The forward results come from the reference (out rounded to the element type, as a kernel
  // would store it).
  std::vector<float> out_exact(static_cast<size_t>(shape.q_elements()));
  GuardedTensor<float> lse(shape.lse_elements());
  std::vector<float> lse_values(static_cast<size_t>(shape.lse_elements()));
  reference::attention_forward<float>(shape, options, {q.values, k.values, v.values}, out_exact, lse_values);
  std::copy(lse_values.begin(), lse_values.end(), lse.data());
  GuardedTensor<Element> out(shape.q_elements());
  std::vector<float> out_values(out_exact.size());
  for (int64_t i = 0; i < out.size(); ++i) {
    out[i] = ElementTraits<Element>::from_float(out_exact[i]);
    out_values[i] = ElementTraits<Element>::to_float(out[i]);
  }
  // Accumulators start non-zero: the kernels must add, not overwrite.
  const std::vector<float> dq_init = random_tensor<float>(shape.q_elements(), rng);
  const std::vector<float> dkv_init = random_tensor<float>(shape.kv_elements(), rng);
  GuardedTensor<float> dq(shape.q_elements()), dk(shape.kv_elements()), dv(shape.kv_elements());
  std::copy(dq_init.begin(), dq_init.end(), dq.data());
  std::copy(dkv_init.begin(), dkv_init.end(), dk.data());
  std::copy(dkv_init.begin(), dkv_init.end(), dv.data());
  GuardedTensor<float> delta(shape.lse_elements());

  const AttentionFwdParams fwd =
      make_forward_params(shape, options, ElementTraits<Element>::kType, q.device.data(), k.device.data(),
                          v.device.data(), out.data(), lse.data());
  const AttentionBwdParams params =
      make_backward_params(fwd, dout.device.data(), dq.data(), dk.data(), dv.data(), delta.data());
  check_supported(params);
  emulation::launch(
      attention_impl::delta_grid<kHeadDim>(params), attention_impl::kDeltaThreads, 0,
      [&] { attention_impl::attention_bwd_delta_kernel<Element, kHeadDim>(params); }, seed);
  if (kernel == Kernel::kWgmma) {
    using Traits = attention_impl::BwdWgmmaConfig<kHeadDim>;
    emulation::launch(
        attention_impl::bwd_grid<Traits>(params), Traits::kThreads, Traits::kSmemBytes,
        [&] { attention_impl::attention_bwd_wgmma_kernel<Element, Traits>(params); }, seed);
  } else {
    using Traits = attention_impl::BwdConfig<kHeadDim>;
    emulation::launch(
        attention_impl::bwd_grid<Traits>(params), Traits::kThreads, Traits::kSmemBytes,
        [&] { attention_impl::attention_bwd_kernel<Element, Traits>(params); }, seed);
  }

  std::vector<float> dq_ref(dq_init.size()), dk_ref(dkv_init.size()), dv_ref(dkv_init.size());
  reference::attention_backward<float>(shape, options,
                                       {q.values, k.values, v.values, out_values, lse_values, dout.values},
                                       dq_ref, dk_ref, dv_ref);
  auto added = [](const GuardedTensor<float>& acc, const std::vector<float>& init) {
    std::vector<float> d(init.size());
    for (size_t i = 0; i < d.size(); ++i) {
      d[i] = acc[static_cast<int64_t>(i)] - init[i];
    }
    return d;
  };
  EXPECT_LT(relative_error(added(dq, dq_init), dq_ref), tolerance<Element>());
  EXPECT_LT(relative_error(added(dk, dkv_init), dk_ref), tolerance<Element>());
  EXPECT_LT(relative_error(added(dv, dkv_init), dv_ref), tolerance<Element>());
  for (GuardedTensor<float>* t : {&dq, &dk, &dv, &delta}) {
    EXPECT_TRUE(t->guards_intact());
  }
}

// Shapes with head_dim set per kernel: partial tiles, GQA, batches, q_len != kv_len both ways.
const std::vector<Case>& cases() {
  static const std::vector<Case> all = {
      {{1, 100, 100, 2, 1, 0}, true},  // FPDT diagonal block (square, causal), partial tiles, GQA 2:1
      {{2, 37, 150, 2, 2, 0}, false},  // full block, several key tiles, batch 2
      {{1, 150, 37, 1, 1, 0}, true},   // bottom-right causal: the first 113 rows see no key
  };
  return all;
}

TEST(AttentionEmulation, ForwardBf16HeadDim64) {
  uint32_t seed = 1;
  for (const Case& c : cases()) {
    check_forward<__nv_bfloat16, 64>(c, seed++);
  }
}

TEST(AttentionEmulation, ForwardBf16HeadDim128) {
  uint32_t seed = 11;
  for (const Case& c : cases()) {
    check_forward<__nv_bfloat16, 128>(c, seed++);
  }
}

TEST(AttentionEmulation, ForwardFp16) {
  check_forward<__half, 64>(cases()[1], 21);
  check_forward<__half, 128>(cases()[0], 22);
}

// The wgmma kernels' tiles are 128 x 128 (forward) and 128 keys x 64 queries (backward): these shapes
// add a second block and several tiles with a partial last one.
const std::vector<Case>& wgmma_cases() {
  static const std::vector<Case> all = {
      {{1, 200, 200, 2, 1, 0}, true},  // causal square, GQA 2:1: the diagonal tile of each block
      {{2, 37, 300, 1, 1, 0}, false},  // full, one partial query block, three key tiles
      {{1, 150, 37, 1, 1, 0}, true},   // bottom-right causal: the first 113 rows see no key
  };
  return all;
}

TEST(AttentionEmulation, ForwardWgmmaBf16HeadDim64) {
  uint32_t seed = 71;
  for (const Case& c : wgmma_cases()) {
    check_forward<__nv_bfloat16, 64>(c, seed++, Kernel::kWgmma);
  }
}

TEST(AttentionEmulation, ForwardWgmmaBf16HeadDim128) {
  uint32_t seed = 81;
  for (const Case& c : wgmma_cases()) {
    check_forward<__nv_bfloat16, 128>(c, seed++, Kernel::kWgmma);
  }
}

TEST(AttentionEmulation, ForwardWgmmaFp16) {
  check_forward<__half, 64>(wgmma_cases()[0], 91, Kernel::kWgmma);
  check_forward<__half, 128>(wgmma_cases()[1], 92, Kernel::kWgmma);
}

TEST(AttentionEmulation, BackwardWgmmaBf16HeadDim64) {
  uint32_t seed = 101;
  for (const Case& c : wgmma_cases()) {
    check_backward<__nv_bfloat16, 64>(c, seed++, Kernel::kWgmma);
  }
}

TEST(AttentionEmulation, BackwardWgmmaBf16HeadDim128) {
  uint32_t seed = 111;
  for (const Case& c : wgmma_cases()) {
    check_backward<__nv_bfloat16, 128>(c, seed++, Kernel::kWgmma);
  }
}

TEST(AttentionEmulation, BackwardWgmmaFp16) {
  check_backward<__half, 64>(wgmma_cases()[1], 121, Kernel::kWgmma);
  check_backward<__half, 128>(wgmma_cases()[0], 122, Kernel::kWgmma);
}

TEST(AttentionEmulation, BackwardBf16HeadDim64) {
  uint32_t seed = 31;
  for (const Case& c : cases()) {
    check_backward<__nv_bfloat16, 64>(c, seed++);
  }
}

TEST(AttentionEmulation, BackwardBf16HeadDim128) {
  uint32_t seed = 41;
  for (const Case& c : cases()) {
    check_backward<__nv_bfloat16, 128>(c, seed++);
  }
}

TEST(AttentionEmulation, BackwardFp16) {
  check_backward<__half, 64>(cases()[0], 51);
  check_backward<__half, 128>(cases()[1], 52);
}

template <typename Element>
void check_merge(int head_dim, bool first, uint32_t seed) {
  const AttentionRows rows{2, 9, 3, head_dim};
  std::mt19937 rng(seed);
  emulation::clear_globals();
  auto block_out = rounded<Element>(rows.out_elements(), rng);
  std::vector<float> out_init = random_tensor<float>(rows.out_elements(), rng);
  std::vector<float> lse_init = random_tensor<float>(rows.lse_elements(), rng, 400.0);
  std::vector<float> block_lse_values = random_tensor<float>(rows.lse_elements(), rng, 400.0);
  lse_init[1] = -std::numeric_limits<float>::infinity();          // empty running result
  block_lse_values[2] = -std::numeric_limits<float>::infinity();  // empty block
  GuardedTensor<float> out(rows.out_elements()), lse(rows.lse_elements()), block_lse(rows.lse_elements());
  if (!first) {  // with `first`, out and lse stay poisoned: the kernel must not read them
    std::copy(out_init.begin(), out_init.end(), out.data());
    std::copy(lse_init.begin(), lse_init.end(), lse.data());
  }
  std::copy(block_lse_values.begin(), block_lse_values.end(), block_lse.data());
  const MergeParams params = make_merge_params(rows, ElementTraits<Element>::kType, first, out.data(),
                                               lse.data(), block_out.device.data(), block_lse.data());
  check_supported(params);
  emulation::launch(
      attention_impl::merge_grid(params), attention_impl::kMergeThreads, 0,
      [&] { attention_impl::merge_kernel<Element>(params); }, seed);
  reference::merge_attention<float>(rows, first, out_init, lse_init, block_out.values, block_lse_values);
  EXPECT_LT(relative_error(floats(out), out_init), 1e-6);
  EXPECT_LT(relative_error(floats(lse), lse_init), 1e-6);
  EXPECT_TRUE(out.guards_intact());
  EXPECT_TRUE(lse.guards_intact());
}

TEST(AttentionEmulation, Merge) {
  check_merge<__nv_bfloat16>(128, false, 61);
  check_merge<__nv_bfloat16>(64, true, 62);
  check_merge<__half>(64, false, 63);
}

TEST(AttentionEmulation, EmulatorCatchesAMissingWait) {
  // A kernel that reads shared memory before waiting for its cp.async sees the poison (NaN).
  emulation::clear_globals();
  GuardedTensor<float> src(4, 0), dst(32);
  emulation::launch(dim3(1), 32, 16, [&] {
    float* shared = reinterpret_cast<float*>(ptx::dynamic_smem());
    if (threadIdx.x == 0) {
      ptx::cp_async_16(shared, src.data(), true);
      ptx::cp_async_commit();
    }
    __syncthreads();
    dst[threadIdx.x] = shared[0];
  });
  EXPECT_TRUE(std::isnan(dst[5]));
}

TEST(AttentionEmulation, EmulatorCatchesDivergentBarriers) {
  EXPECT_THROW(emulation::launch(dim3(1), 64, 0,
                                 [] {
                                   if (threadIdx.x < 32) {
                                     __syncthreads();
                                   }
                                 }),
               emulation::EmulationError);
}

}  // namespace
}  // namespace trainsim::kernels
