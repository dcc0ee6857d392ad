#include "sim/cost/compute_model.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "sim/cost/interpolation.h"

namespace trainsim::cost {
namespace {

using config::AttentionPass;
using config::Dtype;

// Query-key pairs a causal mask aligned to the bottom-right corner leaves unmasked.
double unmasked_pairs(int64_t q_len, int64_t kv_len, bool causal) {
  const double q = static_cast<double>(q_len);
  const double kv = static_cast<double>(kv_len);
  if (!causal) return q * kv;
  if (q <= kv) return q * (kv - q) + q * (q + 1) / 2;
  return kv * (kv + 1) / 2;  // rows above the diagonal see nothing
}

}  // namespace

double attention_flops(const AttentionCall& c) {
  const double forward =
      4.0 * static_cast<double>(c.batch * c.heads * c.head_dim) * unmasked_pairs(c.q_len, c.kv_len, c.causal);
  return c.pass == AttentionPass::kForward ? forward : 2.5 * forward;
}

ComputeModel::ComputeModel(const config::HardwareProfile& profile, WarningLog* warnings)
    : profile_(profile),
      warnings_(warnings),
      launch_s_(profile.compute.kernel_launch_s),
      host_sync_s_(profile.compute.host_sync_s) {}

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

double ComputeModel::gemm_s(int64_t m, int64_t n, int64_t k, Dtype dtype) const {
  const double flops = 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  const double peak = peak_flops_per_s(dtype);
  std::vector<Sample3> samples;
  for (const config::GemmSample& s : profile_.gemm_samples) {
    if (s.dtype != dtype) continue;
    const double sample_flops =
        2.0 * static_cast<double>(s.m) * static_cast<double>(s.n) * static_cast<double>(s.k);
    samples.push_back({{static_cast<double>(s.m), static_cast<double>(s.n), static_cast<double>(s.k)},
                       sample_flops / (s.duration_s * peak)});
  }
  if (!samples.empty()) {
    const Interpolated e =
        interpolate_log3(samples, {static_cast<double>(m), static_cast<double>(n), static_cast<double>(k)});
    if (e.extrapolated) {
      warnings_->add(
          "gemm-range-" + std::string(config::to_string(dtype)),
          fmt::format("gemm {}x{}x{} ({}) is outside the measured GEMM range {}; using the nearest "
                      "measured efficiencies",
                      m, n, k, config::to_string(dtype), e.range));
    }
    return std::max(flops / (peak * e.value), launch_s_);
  }
  const double elem = config::dtype_bytes(dtype);
  const double bytes =
      elem * (static_cast<double>(m) * k + static_cast<double>(k) * n + static_cast<double>(m) * n);
  const double compute =
      flops / (peak * efficiency_or_one(profile_.compute.gemm_efficiency, "gemm_efficiency"));
  return std::max({compute, memory_s(bytes), launch_s_});
}

double ComputeModel::attention_s(const AttentionCall& c) const {
  const double flops = attention_flops(c);
  const double peak = peak_flops_per_s(c.dtype);
  std::vector<Sample3> samples;
  for (const config::AttentionSample& s : profile_.attention_samples) {
    if (s.pass != c.pass || s.causal != c.causal || s.dtype != c.dtype || s.head_dim != c.head_dim) continue;
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
    return std::max(flops / (peak * e.value), launch_s_);
  }
  const double efficiency =
      c.pass == AttentionPass::kForward
          ? efficiency_or_one(profile_.compute.attention_forward_efficiency, "attention_forward_efficiency")
          : efficiency_or_one(profile_.compute.attention_backward_efficiency,
                              "attention_backward_efficiency");
  return std::max(flops / (peak * efficiency), launch_s_);
}

double ComputeModel::memory_s(double bytes) const {
  const double bandwidth = profile_.gpu.hbm_bandwidth_bytes_per_s *
                           efficiency_or_one(profile_.compute.memory_efficiency, "memory_efficiency");
  return std::max(bytes / bandwidth, launch_s_);
}

}  // namespace trainsim::cost
