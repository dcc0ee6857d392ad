// Gradients of the references checked by central finite differences in double on small shapes:
// the loss is sum(out ∘ dout) for a fixed random dout.
#include <functional>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "kernels/reference/attention.h"
#include "kernels/reference/fpdt.h"
#include "tests/kernels/test_util.h"

namespace trainsim::kernels {
namespace {

using testing::random_tensor;

using Forward = std::function<std::vector<double>(const std::vector<double>&, const std::vector<double>&,
                                                  const std::vector<double>&)>;

double loss(const Forward& forward, const std::vector<double>& q, const std::vector<double>& k,
            const std::vector<double>& v, const std::vector<double>& dout) {
  const std::vector<double> out = forward(q, k, v);
  double sum = 0.0;
  for (size_t i = 0; i < out.size(); ++i) {
    sum += out[i] * dout[i];
  }
  return sum;
}

// Compares every analytic gradient entry with (L(x + h) - L(x - h)) / 2h.
void check_gradients(const Forward& forward, std::vector<double> q, std::vector<double> k,
                     std::vector<double> v, const std::vector<double>& dout, const std::vector<double>& dq,
                     const std::vector<double>& dk, const std::vector<double>& dv) {
  constexpr double kStep = 1e-5;
  std::vector<double>* inputs[] = {&q, &k, &v};
  const std::vector<double>* grads[] = {&dq, &dk, &dv};
  const char* names[] = {"dq", "dk", "dv"};
  for (int t = 0; t < 3; ++t) {
    std::vector<double>& x = *inputs[t];
    for (size_t i = 0; i < x.size(); ++i) {
      const double saved = x[i];
      x[i] = saved + kStep;
      const double plus = loss(forward, q, k, v, dout);
      x[i] = saved - kStep;
      const double minus = loss(forward, q, k, v, dout);
      x[i] = saved;
      const double numeric = (plus - minus) / (2 * kStep);
      ASSERT_NEAR((*grads[t])[i], numeric, 1e-7 * (1.0 + std::abs(numeric))) << names[t] << "[" << i << "]";
    }
  }
}

TEST(ReferenceGradients, BlockAttentionMatchesFiniteDifferences) {
  const std::vector<std::pair<AttentionShape, bool>> cases = {
      {{1, 5, 5, 2, 2, 4}, true},   // causal diagonal block
      {{2, 4, 6, 4, 2, 4}, false},  // GQA, q_len != kv_len
      {{1, 6, 4, 2, 1, 8}, true},   // causal with q_len > kv_len (two rows see nothing)
  };
  uint32_t seed = 20;
  for (const auto& [s, causal] : cases) {
    std::mt19937 rng(seed++);
    const AttentionOptions options{causal, 0.7};
    const auto q = random_tensor<double>(s.q_elements(), rng);
    const auto k = random_tensor<double>(s.kv_elements(), rng);
    const auto v = random_tensor<double>(s.kv_elements(), rng);
    const auto dout = random_tensor<double>(s.q_elements(), rng);
    // `shape` names the binding `s` for the lambda (capturing structured bindings needs clang 16).
    const Forward forward = [&, &shape = s](const std::vector<double>& qq, const std::vector<double>& kk,
                                            const std::vector<double>& vv) {
      std::vector<double> out(qq.size()), lse(static_cast<size_t>(shape.lse_elements()));
      reference::attention_forward<double>(shape, options, {qq, kk, vv}, out, lse);
      return out;
    };
    std::vector<double> out(q.size()), lse(static_cast<size_t>(s.lse_elements()));
    reference::attention_forward<double>(s, options, {q, k, v}, out, lse);
    std::vector<double> dq(q.size()), dk(k.size()), dv(v.size());
    reference::attention_backward<double>(s, options, {q, k, v, out, lse, dout}, dq, dk, dv);
    check_gradients(forward, q, k, v, dout, dq, dk, dv);
  }
}

TEST(ReferenceGradients, ChunkedFpdtMatchesFiniteDifferences) {
  const FpdtShape shape{1, 4, 2, 4, {3, 2, 4}};
  const AttentionShape whole = shape.whole();
  std::mt19937 rng(42);
  const auto q = random_tensor<double>(whole.q_elements(), rng);
  const auto k = random_tensor<double>(whole.kv_elements(), rng);
  const auto v = random_tensor<double>(whole.kv_elements(), rng);
  const auto dout = random_tensor<double>(whole.q_elements(), rng);
  const Forward forward = [&](const std::vector<double>& qq, const std::vector<double>& kk,
                              const std::vector<double>& vv) {
    std::vector<double> out(qq.size()), lse(static_cast<size_t>(whole.lse_elements()));
    reference::fpdt_forward<double>(shape, std::nullopt, {qq, kk, vv}, out, lse);
    return out;
  };
  std::vector<double> out(q.size()), lse(static_cast<size_t>(whole.lse_elements()));
  reference::fpdt_forward<double>(shape, std::nullopt, {q, k, v}, out, lse);
  std::vector<double> dq(q.size()), dk(k.size()), dv(v.size());
  reference::fpdt_backward<double>(shape, std::nullopt, {q, k, v, out, lse, dout}, dq, dk, dv);
  check_gradients(forward, q, k, v, dout, dq, dk, dv);
}

}  // namespace
}  // namespace trainsim::kernels
