#include "sim/cost/compute_model.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <initializer_list>
#include <memory>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "sim/cost/attention_waves.h"
#include "sim/cost/interpolation.h"

namespace trainsim::cost {
namespace {

using config::AttentionPass;
using config::Dtype;

// The head dims flash kernels are instantiated for are multiples of this.
constexpr double kHeadDimStep = 32;

// Query-key pairs a causal mask aligned to the bottom-right corner leaves unmasked.
double unmasked_pairs(int64_t q_len, int64_t kv_len, bool causal) {
  const double q = static_cast<double>(q_len);
  const double kv = static_cast<double>(kv_len);
  if (!causal) return q * kv;
  if (q <= kv) return q * (kv - q) + q * (q + 1) / 2;
  return kv * (kv + 1) / 2;  // rows above the diagonal see nothing
}

// How a GEMM's output tiles fill the GPU (tile and wave quantization, NVIDIA "Matrix Multiplication
// Background User's Guide", sections 4.1-4.2): m x n is cut into thread-block tiles, each SM runs one
// tile at a time, and the last wave runs partly empty. The largest tensor-core tiles cuBLAS/CUTLASS
// use for big half-precision GEMMs are 256x128, 128x256 and 128x128; the library's heuristic picks
// the best, so the best is taken. With fewer tiles than SMs the library splits k (split-K, at least
// kMinSplitK deep per slice) to fill the GPU. A grouped GEMM's groups are tiled separately and their
// tiles share the waves. Without an SM count every shape fills the GPU.
struct Tiling {
  int64_t tile_m = 1, tile_n = 1;
  int64_t tiles = 1;   // output tiles, all groups
  int64_t splits = 1;  // slices of k
  int64_t waves = 1;
  double useful = 1;  // fraction of the waves' SM-time that computes real output
};

Tiling tile(int64_t m, int64_t n, int64_t k, int64_t groups, int64_t sm_count) {
  Tiling best;
  if (sm_count <= 0) return best;
  constexpr std::array<std::array<int64_t, 2>, 3> kTiles = {{{256, 128}, {128, 256}, {128, 128}}};
  // The deepest slice consistent with our H200's measured cuBLASLt GEMMs: with 512 this roofline
  // predicts them within 12.9 % (ComputeModel.ScalarParametersPredictTheMeasuredGemms), with 1024
  // or more the 1024-deep shapes lose the split they were measured to get and come out 20.6 % slow;
  // 256 predicts the same as 512 (no measured shape is shallow enough to tell them apart).
  constexpr int64_t kMinSplitK = 512;
  best.useful = 0;
  for (const auto& [tile_m, tile_n] : kTiles) {
    Tiling t{tile_m, tile_n, groups * ((m + tile_m - 1) / tile_m) * ((n + tile_n - 1) / tile_n)};
    t.splits = std::clamp<int64_t>(sm_count / t.tiles, 1, std::max<int64_t>(1, k / kMinSplitK));
    t.waves = (t.tiles * t.splits + sm_count - 1) / sm_count;
    // Partial tiles at the matrix edges do full-tile work for part of the output.
    t.useful = static_cast<double>(groups * m) * static_cast<double>(n) * static_cast<double>(t.splits) /
               (static_cast<double>(t.waves * sm_count) * static_cast<double>(tile_m * tile_n));
    // At equal occupancy the library prefers no split (which costs a reduction).
    if (t.useful > best.useful * (1 + 1e-9) ||
        (t.useful >= best.useful * (1 - 1e-9) && t.splits < best.splits)) {
      best = t;
    }
  }
  return best;
}

// The large square GEMM at which a profile's gemm_efficiency (the best-shape ceiling) holds exactly.
constexpr int64_t kReferenceGemm = 8192;

}  // namespace

double attention_flops(const AttentionCall& c) {
  const double forward = 2.0 * static_cast<double>(c.batch * c.heads * (c.head_dim + c.v_dim())) *
                         unmasked_pairs(c.q_len, c.kv_len, c.causal);
  return c.pass == AttentionPass::kForward ? forward : 2.5 * forward;
}

ComputeModel::ComputeModel(const config::HardwareProfile& profile, WarningLog* warnings)
    : profile_(profile),
      warnings_(warnings),
      stack_(profile.stack ? profile.stack->parameters : config::StackParameters()),
      launch_s_(profile.compute.kernel_launch_s),
      host_sync_s_(profile.compute.host_sync_s),
      attention_waves_(prices_attention_by_waves(profile) ? std::make_shared<AttentionWaveCache>()
                                                          : nullptr) {
  // Measured samples are times: a what-if on a rate does not reach the shapes they cover.
  const auto warn_shadowed = [&](size_t samples, const char* table,
                                 std::initializer_list<const char*> rates) {
    for (const char* rate : rates) {
      if (samples == 0 || !config::what_if_touches(profile.what_if, rate)) continue;
      warnings_->add(
          fmt::format("what-if-shadowed-{}", table),
          fmt::format("the what-if on {} does not change the {} measured {} of hardware profile {}, "
                      "which time the shapes they cover; set hardware_set: {{{}: []}} to price every "
                      "shape from the rates",
                      rate, samples, table, profile.name, table));
      return;
    }
  };
  warn_shadowed(profile.gemm_samples.size(), "gemm_samples",
                {"gpu.peak_flops", "compute.gemm_efficiency", "compute.gemm_efficiency_fp8"});
  warn_shadowed(
      profile.attention_samples.size(), "attention_samples",
      {"gpu.peak_flops", "compute.attention_forward_efficiency", "compute.attention_backward_efficiency"});
}

double ComputeModel::peak_flops_per_s(Dtype dtype) const {
  const std::optional<double> peak = profile_.peak_flops_per_s(dtype);
  if (!peak) {
    throw std::invalid_argument(
        fmt::format("hardware profile {} has no peak for {}", profile_.name, config::to_string(dtype)));
  }
  return *peak;
}

double ComputeModel::efficiency_or_one(double value, const char* key) const {
  if (value > 0) return value;
  warnings_->add(
      std::string("missing-") + key,
      fmt::format("hardware profile {} gives no compute.{}; assuming the ideal value 1", profile_.name, key));
  return 1.0;
}

double ComputeModel::gemm_s(int64_t m, int64_t n, int64_t k, Dtype dtype, int64_t groups) const {
  const double flops =
      2.0 * static_cast<double>(groups * m) * static_cast<double>(n) * static_cast<double>(k);
  const double peak = peak_flops_per_s(dtype);
  const double gemm_fraction = stack_[config::StackParameter::kGemmFraction];
  std::vector<Sample3> samples;
  for (const config::GemmSample& s : profile_.gemm_samples) {
    if (s.dtype != dtype) continue;
    const double sample_flops =
        2.0 * static_cast<double>(s.m) * static_cast<double>(s.n) * static_cast<double>(s.k);
    samples.push_back({{static_cast<double>(s.m), static_cast<double>(s.n), static_cast<double>(s.k)},
                       sample_flops / (s.duration_s * peak)});
  }
  if (!samples.empty()) {
    const Interpolated e = interpolate_log3(
        samples, {static_cast<double>(groups * m), static_cast<double>(n), static_cast<double>(k)});
    if (e.extrapolated) {
      warnings_->add(
          "gemm-range-" + std::string(config::to_string(dtype)),
          fmt::format("gemm {}x{}x{} ({}) is outside the measured GEMM range {}; using the nearest "
                      "measured efficiencies",
                      m, n, k, config::to_string(dtype), e.range));
    }
    return std::max(flops / (peak * e.value * gemm_fraction), launch_s_);
  }
  const double elem = config::dtype_bytes(dtype);
  const double bytes = elem * static_cast<double>(groups) *
                       (static_cast<double>(m) * k + static_cast<double>(k) * n + static_cast<double>(m) * n);
  return std::max(gemm_roofline_s(m, n, k, dtype, groups, gemm_fraction), memory_s(bytes));
}

double ComputeModel::gemm_roofline_s(int64_t m, int64_t n, int64_t k, Dtype dtype, int64_t groups,
                                     double fraction) const {
  const double peak = peak_flops_per_s(dtype);
  const int64_t sms = profile_.gpu.sm_count;
  const double bandwidth = memory_bandwidth_bytes_per_s();
  // Low-precision GEMMs write bf16.
  const double out_bytes = std::max(2.0, static_cast<double>(config::dtype_bytes(dtype)));
  // The parts of one GEMM besides its main loop: the kernel's fixed time, each output tile written
  // once its main loop ends (not hidden behind it), and with split-K the serial reduction (CUTLASS's
  // and cuBLAS's): the slice that finishes last reads the other slices' fp32 partial tiles before it
  // writes the output. Traffic at the memory rate.
  const auto overhead = [&](const Tiling& t, int64_t rows, int64_t cols) {
    const double tile_bytes = static_cast<double>(t.tile_m * t.tile_n) * out_bytes;
    const double partials =
        4.0 * static_cast<double>(rows) * static_cast<double>(cols) * static_cast<double>(t.splits - 1);
    return launch_s_ + (static_cast<double>(t.tiles) * tile_bytes + partials) / bandwidth;
  };
  // The main loop's rate is the one at which the reference shape, with its overheads, takes exactly
  // the time the profile's ceiling gives it.
  const double reference = static_cast<double>(kReferenceGemm);
  const Tiling ref = tile(kReferenceGemm, kReferenceGemm, kReferenceGemm, 1, sms);
  const double ref_s = 2.0 * reference * reference * reference / (peak * gemm_efficiency(dtype));
  const double ref_loop_at_peak_s = 2.0 * reference * reference * reference / (peak * ref.useful);
  const double loop_efficiency =
      ref_loop_at_peak_s / std::max(ref_s - overhead(ref, kReferenceGemm, kReferenceGemm), 0.5 * ref_s);
  const Tiling t = tile(m, n, k, groups, sms);
  const double flops =
      2.0 * static_cast<double>(groups * m) * static_cast<double>(n) * static_cast<double>(k);
  return flops / (peak * loop_efficiency * fraction * t.useful) + overhead(t, groups * m, n);
}

double ComputeModel::gemm_efficiency(Dtype dtype) const {
  if (dtype == Dtype::kFp8) {
    if (profile_.compute.gemm_efficiency_fp8 > 0) return profile_.compute.gemm_efficiency_fp8;
    warnings_->add("missing-gemm_efficiency_fp8",
                   fmt::format("hardware profile {} gives no compute.gemm_efficiency_fp8; fp8 GEMMs use "
                               "compute.gemm_efficiency, measured on another dtype",
                               profile_.name));
  }
  return efficiency_or_one(profile_.compute.gemm_efficiency, "gemm_efficiency");
}

double ComputeModel::attention_s(const AttentionCall& c) const {
  const double flops = attention_flops(c);
  const double peak = peak_flops_per_s(c.dtype);
  const double attention_fraction = stack_[config::StackParameter::kAttentionFraction];
  std::vector<Sample3> samples;
  for (const config::AttentionSample& s : profile_.attention_samples) {
    // Samples are measured with value heads of head_dim.
    if (s.pass != c.pass || s.causal != c.causal || s.dtype != c.dtype || s.head_dim != c.head_dim ||
        c.v_dim() != c.head_dim) {
      continue;
    }
    const AttentionCall sample{s.pass,     s.causal, s.dtype,  s.batch,   s.heads,
                               s.kv_heads, s.q_len,  s.kv_len, s.head_dim};
    samples.push_back({{static_cast<double>(s.q_len), static_cast<double>(s.kv_len),
                        static_cast<double>(s.batch * s.heads)},
                       attention_flops(sample) / (s.duration_s * peak)});
  }
  if (!samples.empty()) {
    const Interpolated e =
        interpolate_log3(samples, {static_cast<double>(c.q_len), static_cast<double>(c.kv_len),
                                   static_cast<double>(c.batch * c.heads)});
    if (e.extrapolated) {
      warnings_->add(
          fmt::format("attention-range-{}-{}", config::to_string(c.pass), c.head_dim),
          fmt::format("attention {} (q_len {}, kv_len {}, batch x heads {}, head_dim {}) is outside the "
                      "measured range (q_len, kv_len, batch x heads) {}; using the nearest measured "
                      "efficiencies",
                      config::to_string(c.pass), c.q_len, c.kv_len, c.batch * c.heads, c.head_dim, e.range));
    }
    return std::max(flops / (peak * e.value * attention_fraction), launch_s_);
  }
  const bool forward = c.pass == AttentionPass::kForward;
  const double rate = peak * attention_fraction *
                      (forward ? efficiency_or_one(profile_.compute.attention_forward_efficiency,
                                                   "attention_forward_efficiency")
                               : efficiency_or_one(profile_.compute.attention_backward_efficiency,
                                                   "attention_backward_efficiency"));
  // Flash kernels are compiled for head dims in steps of 32 (FlashAttention-2's HEADDIM_SWITCH: 32,
  // 64, 96, 128, ...); another head_dim runs in the next one up and does the padding's work too.
  const auto padded = [](int64_t dim) {
    return static_cast<int64_t>(std::ceil(static_cast<double>(dim) / kHeadDimStep) * kHeadDimStep);
  };
  const double padded_dims = static_cast<double>(padded(c.head_dim) + padded(c.v_dim()));
  if (!attention_waves_) {
    return launch_s_ + flops * padded_dims / static_cast<double>(c.head_dim + c.v_dim()) / rate;
  }
  // The kernel's blocks over the GPU's SMs; the efficiency is its rate with every SM full.
  const AttentionTiling tiling =
      attention_tiling(*profile_.compute.attention_kernel, c.pass, padded(c.head_dim), c.causal);
  // One step of one block: an unmasked block_rows x step_rows tile of one head at the padded dims.
  const AttentionCall step{
      c.pass,           false, c.dtype, 1, 1, 1, tiling.block_rows, tiling.step_rows, padded(c.head_dim),
      padded(c.v_dim())};
  const double step_flops = attention_flops(step);
  const double step_s = static_cast<double>(tiling.blocks_per_sm * profile_.gpu.sm_count) * step_flops / rate;
  const double kernel_s = launch_s_ + attention_waves_->steps(c, tiling, profile_.gpu.sm_count) * step_s;
  if (forward) return kernel_s;
  // The backward's passes around it: D = rowsum(dO * O) first (reads dO and O, writes fp32), and
  // where the kernel accumulates dQ in fp32 a pass writing it in the input type.
  const double rows = static_cast<double>(c.batch * c.heads * c.q_len);
  const double elem = config::dtype_bytes(c.dtype);
  double passes_s = memory_s(rows * (2.0 * elem * static_cast<double>(c.v_dim()) + 4.0));
  if (tiling.converts_dq) passes_s += memory_s(rows * static_cast<double>(c.head_dim) * (4.0 + elem));
  return kernel_s + passes_s;
}

bool ComputeModel::prices_attention_by_waves(const config::HardwareProfile& profile) {
  return profile.compute.attention_kernel.has_value() && profile.gpu.sm_count > 0;
}

double ComputeModel::memory_bandwidth_bytes_per_s() const {
  return profile_.gpu.hbm_bandwidth_bytes_per_s *
         efficiency_or_one(profile_.compute.memory_efficiency, "memory_efficiency");
}

double ComputeModel::memory_s(double bytes) const {
  return launch_s_ +
         bytes / (memory_bandwidth_bytes_per_s() * stack_[config::StackParameter::kMemoryFraction]);
}

}  // namespace trainsim::cost
