// Spot checks of large GPU results against the CPU reference, row by row (the full reference would
// take hours at 64K tokens): sampled query rows of out, lse and dq, sampled key rows of dk and dv,
// sampled entries of a GEMM. Errors are relative to the largest reference value of the row.
#ifndef TRAINSIM_KERNELS_BENCH_VERIFY_H_
#define TRAINSIM_KERNELS_BENCH_VERIFY_H_

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/attention/attention_shape.h"
#include "kernels/gemm/gemm_shape.h"
#include "kernels/reference/attention.h"

namespace trainsim::kernels::bench {

// The outcome of a check: the worst error seen and whether it stayed under the tolerance.
class Check {
 public:
  explicit Check(double tolerance) : tolerance_(tolerance) {}
  // Compares a row with its reference, relative to the largest |want| of the row or to `scale_floor`,
  // whichever is larger (a floor from other rows judges a row whose reference is exactly zero, such as
  // dq of the first query under a causal mask).
  void row(const float* got, const std::vector<double>& want, const std::string& where,
           double scale_floor = 0.0);
  void value(double got, double want, double scale, const std::string& where);
  void fail(const std::string& why);
  // "ok" or a one-line reason.
  std::string summary() const;
  bool ok() const { return failure_.empty(); }

 private:
  double tolerance_;
  double worst_ = 0.0;
  std::string failure_;
};

// A whole tensor against its reference: the largest |got - want| relative to the largest |want|;
// -inf must match exactly (rows without keys), and any other non-finite value fails.
Check check_tensor(const std::vector<float>& got, const std::vector<float>& want, double tolerance,
                   const std::string& name);

// `samples` query rows (with every head) of out and lse; also fails on any NaN or infinity in out.
Check check_forward(const AttentionShape& shape, const AttentionOptions& options,
                    const reference::ForwardInputs<float>& in, const std::vector<float>& out,
                    const std::vector<float>& lse, int samples, uint64_t seed, double tolerance);

// `samples` query rows of dq and `samples` key rows of dk, dv; also fails on NaN or infinity.
Check check_backward(const AttentionShape& shape, const AttentionOptions& options,
                     const reference::BackwardInputs<float>& in, const std::vector<float>& dq,
                     const std::vector<float>& dk, const std::vector<float>& dv, int samples, uint64_t seed,
                     double tolerance);

// `samples` entries of D = op(A)·op(B).
Check check_gemm(const GemmShape& shape, const std::vector<float>& a, const std::vector<float>& b,
                 const std::vector<float>& d, int samples, uint64_t seed, double tolerance);

}  // namespace trainsim::kernels::bench

#endif  // TRAINSIM_KERNELS_BENCH_VERIFY_H_
