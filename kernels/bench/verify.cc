#include "kernels/bench/verify.h"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <random>
#include <sstream>

#include "kernels/bench/tensors.h"

namespace trainsim::kernels::bench {

void Check::row(const float* got, const std::vector<double>& want, const std::string& where,
                double scale_floor) {
  double scale = std::max(1e-30, scale_floor);
  for (const double w : want) {
    scale = std::max(scale, std::abs(w));
  }
  for (size_t i = 0; i < want.size(); ++i) {
    value(got[i], want[i], scale, where + "[" + std::to_string(i) + "]");
    if (!ok()) {
      return;
    }
  }
}

void Check::value(double got, double want, double scale, const std::string& where) {
  const double error = std::isfinite(got) ? std::abs(got - want) / scale : INFINITY;
  worst_ = std::max(worst_, error);
  if (error > tolerance_ && failure_.empty()) {
    std::ostringstream s;
    s << "FAILED at " << where << ": got " << got << ", reference " << want << " (relative error " << error
      << ")";
    failure_ = s.str();
  }
}

void Check::fail(const std::string& why) {
  if (failure_.empty()) {
    failure_ = "FAILED: " + why;
  }
}

std::string Check::summary() const {
  if (!failure_.empty()) {
    return failure_;
  }
  std::ostringstream s;
  s << "ok (max rel. error " << std::setprecision(2) << worst_ << ")";
  return s.str();
}

Check check_tensor(const std::vector<float>& got, const std::vector<float>& want, double tolerance,
                   const std::string& name) {
  Check check(tolerance);
  double scale = 1e-30;
  for (const float w : want) {
    if (std::isfinite(w)) {
      scale = std::max(scale, static_cast<double>(std::abs(w)));
    }
  }
  for (size_t i = 0; i < want.size() && check.ok(); ++i) {
    if (std::isinf(want[i]) && got[i] == want[i]) {
      continue;
    }
    check.value(got[i], want[i], scale, name + "[" + std::to_string(i) + "]");
  }
  return check;
}

Check check_forward(const AttentionShape& shape, const AttentionOptions& options,
                    const reference::ForwardInputs<float>& in, const std::vector<float>& out,
                    const std::vector<float>& lse, int samples, uint64_t seed, double tolerance) {
  Check check(tolerance);
  if (!all_finite(out)) {
    check.fail("NaN or infinity in out (unwritten element?)");
    return check;
  }
  std::mt19937_64 rng(seed);
  for (int s = 0; s < samples && check.ok(); ++s) {
    const int64_t b = static_cast<int64_t>(rng() % shape.batch);
    // Rows near both ends of the block, where the masks and partial tiles are.
    const int64_t i = s % 2 == 0 ? static_cast<int64_t>(rng() % shape.q_len)
                                 : std::max<int64_t>(0, shape.q_len - 1 - s / 2);
    for (int64_t h = 0; h < shape.heads && check.ok(); ++h) {
      const reference::ForwardRow row = reference::attention_forward_row<float>(shape, options, in, b, h, i);
      const std::string where =
          "out(b=" + std::to_string(b) + ", i=" + std::to_string(i) + ", h=" + std::to_string(h) + ")";
      check.row(out.data() + ((b * shape.q_len + i) * shape.heads + h) * shape.head_dim, row.out, where);
      const float got_lse = lse[(b * shape.heads + h) * shape.q_len + i];
      if (std::isinf(row.lse)) {
        if (got_lse != static_cast<float>(row.lse)) {
          check.fail("lse of a row without keys is not -inf at " + where);
        }
      } else {
        check.value(got_lse, row.lse, 1.0 + std::abs(row.lse), "lse at " + where);
      }
    }
  }
  return check;
}

Check check_backward(const AttentionShape& shape, const AttentionOptions& options,
                     const reference::BackwardInputs<float>& in, const std::vector<float>& dq,
                     const std::vector<float>& dk, const std::vector<float>& dv, int samples, uint64_t seed,
                     double tolerance) {
  Check check(tolerance);
  if (!all_finite(dq) || !all_finite(dk) || !all_finite(dv)) {
    check.fail("NaN or infinity in dq, dk or dv");
    return check;
  }
  std::mt19937_64 rng(seed);
  for (int s = 0; s < samples && check.ok(); ++s) {
    const int64_t b = static_cast<int64_t>(rng() % shape.batch);
    const int64_t i = static_cast<int64_t>(rng() % shape.q_len);
    const int64_t h = static_cast<int64_t>(rng() % shape.heads);
    check.row(dq.data() + ((b * shape.q_len + i) * shape.heads + h) * shape.head_dim,
              reference::attention_backward_dq_row<float>(shape, options, in, b, h, i),
              "dq(b=" + std::to_string(b) + ", i=" + std::to_string(i) + ", h=" + std::to_string(h) + ")");
    const int64_t j = s % 2 == 0 ? static_cast<int64_t>(rng() % shape.kv_len)
                                 : std::max<int64_t>(0, shape.kv_len - 1 - s / 2);
    const int64_t hk = static_cast<int64_t>(rng() % shape.kv_heads);
    const reference::KvRowGradients kv =
        reference::attention_backward_kv_row<float>(shape, options, in, b, hk, j);
    const int64_t offset = ((b * shape.kv_len + j) * shape.kv_heads + hk) * shape.head_dim;
    const std::string where =
        "(b=" + std::to_string(b) + ", j=" + std::to_string(j) + ", hk=" + std::to_string(hk) + ")";
    check.row(dk.data() + offset, kv.dk, "dk" + where);
    check.row(dv.data() + offset, kv.dv, "dv" + where);
  }
  return check;
}

Check check_gemm(const GemmShape& shape, const std::vector<float>& a, const std::vector<float>& b,
                 const std::vector<float>& d, int samples, uint64_t seed, double tolerance) {
  Check check(tolerance);
  if (!all_finite(d)) {
    check.fail("NaN or infinity in D");
    return check;
  }
  std::mt19937_64 rng(seed);
  for (int s = 0; s < samples && check.ok(); ++s) {
    const int64_t i = static_cast<int64_t>(rng() % shape.m);
    const int64_t j = static_cast<int64_t>(rng() % shape.n);
    double sum = 0.0;
    double magnitude = 1e-30;
    for (int64_t p = 0; p < shape.k; ++p) {
      const double x = shape.transpose_a ? a[p * shape.m + i] : a[i * shape.k + p];
      const double y = shape.transpose_b ? b[j * shape.k + p] : b[p * shape.n + j];
      sum += x * y;
      magnitude += std::abs(x * y);
    }
    // Relative to the sum of magnitudes: random signs make the result itself near zero.
    check.value(d[i * shape.n + j], sum, magnitude / std::sqrt(static_cast<double>(shape.k)),
                "D(" + std::to_string(i) + ", " + std::to_string(j) + ")");
  }
  return check;
}

}  // namespace trainsim::kernels::bench
