// What one timed measurement is: the cases the harness sweeps, in the terms of the hardware-profile
// schema (sim/config/hardware.h), so a measured case becomes a profile sample without translation.
#ifndef TRAINSIM_CALIBRATE_CASES_H_
#define TRAINSIM_CALIBRATE_CASES_H_

#include <cstdint>
#include <string>

#include "sim/config/types.h"

namespace trainsim::calibrate {

// D[m, n] = X[m, k]·W[n, k]ᵀ, the forward layout of a linear layer (kernels/gemm/gemm_shape.h).
struct GemmCase {
  config::Dtype dtype = config::Dtype::kBf16;
  int64_t m = 0, n = 0, k = 0;

  double flops() const {
    return 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  }
};

// One attention block as FPDT issues it (kernels/attention/attention_shape.h): the forward or the
// backward pass, causal (bottom-right aligned) or full.
struct AttentionCase {
  config::AttentionPass pass = config::AttentionPass::kForward;
  bool causal = false;
  config::Dtype dtype = config::Dtype::kBf16;
  int64_t batch = 1, heads = 1, kv_heads = 1, q_len = 0, kv_len = 0, head_dim = 0;

  // FLOPs as flash-attn counts them (forward 4·pairs·head_dim per head, backward 2.5 times that),
  // the accounting sim/cost uses to turn a sample into an efficiency.
  double flops() const;
};

// One collective over `ranks` GPUs of one node; `bytes` is nccl-tests' "size" (the all-reduce
// buffer, the all-gather output, the reduce-scatter input, the all-to-all send buffer, the
// send/recv message; 0 for the barrier).
struct CollectiveCase {
  config::CollectiveKind kind = config::CollectiveKind::kAllReduce;
  int ranks = 1;
  double bytes = 0;
};

// Pinned host<->device copies of `bytes` each, `concurrent` GPUs of the node copying at once.
struct CopyCase {
  config::CopyDirection direction = config::CopyDirection::kHostToDevice;
  int concurrent = 1;
  double bytes = 0;
};

// One-line descriptions for progress lines and logs ("gemm bf16 4096x4096x4096").
std::string describe(const GemmCase& c);
std::string describe(const AttentionCase& c);
std::string describe(const CollectiveCase& c);
std::string describe(const CopyCase& c);

}  // namespace trainsim::calibrate

#endif  // TRAINSIM_CALIBRATE_CASES_H_
