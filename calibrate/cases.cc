#include "calibrate/cases.h"

#include <fmt/format.h>

#include "sim/config/units.h"

namespace trainsim::calibrate {

double AttentionCase::flops() const {
  const double q = static_cast<double>(q_len);
  const double kv = static_cast<double>(kv_len);
  double pairs = q * kv;
  if (causal) pairs = q <= kv ? q * (kv - q) + q * (q + 1) / 2 : kv * (kv + 1) / 2;
  const double forward = 4.0 * static_cast<double>(batch * heads * head_dim) * pairs;
  return pass == config::AttentionPass::kForward ? forward : 2.5 * forward;
}

std::string describe(const GemmCase& c) {
  return fmt::format("gemm {} {}x{}x{}", config::to_string(c.dtype), c.m, c.n, c.k);
}

std::string describe(const AttentionCase& c) {
  return fmt::format("attention {} {} {} b{} h{}/{} q{} kv{} d{}", config::to_string(c.pass),
                     c.causal ? "causal" : "full", config::to_string(c.dtype), c.batch, c.heads, c.kv_heads,
                     c.q_len, c.kv_len, c.head_dim);
}

std::string describe(const CollectiveCase& c) {
  return fmt::format("{} {} ranks {}", config::to_string(c.kind), c.ranks,
                     config::format_quantity(c.bytes, config::QuantityKind::kBytes));
}

std::string describe(const CopyCase& c) {
  return fmt::format("copy {} x{} {}", config::to_string(c.direction), c.concurrent,
                     config::format_quantity(c.bytes, config::QuantityKind::kBytes));
}

}  // namespace trainsim::calibrate
