// How long one kernel takes on one GPU, from a hardware profile. Measured tables win where they
// cover the shape (interpolated between samples); elsewhere a roofline with the profile's achievable
// efficiencies, floored at the kernel launch time. A stack profile's fractions (config/stack.h) then
// scale each kind of kernel's rate: GEMMs, fused attention, memory-bound passes. Every extrapolation
// beyond measured data and every missing efficiency is recorded in the WarningLog, naming the op and
// the range.
#ifndef TRAINSIM_SIM_COST_COMPUTE_MODEL_H_
#define TRAINSIM_SIM_COST_COMPUTE_MODEL_H_

#include <cstdint>

#include "sim/common/warnings.h"
#include "sim/config/hardware.h"

namespace trainsim::cost {

struct AttentionCall {
  config::AttentionPass pass = config::AttentionPass::kForward;
  bool causal = false;  // mask aligned to the bottom-right corner (the diagonal block when q == kv)
  config::Dtype dtype = config::Dtype::kBf16;
  int64_t batch = 1, heads = 0, kv_heads = 0, q_len = 0, kv_len = 0, head_dim = 0;
  int64_t value_dim = 0;  // of V and the output; 0: head_dim (MLA's differ)
  int64_t v_dim() const { return value_dim > 0 ? value_dim : head_dim; }
};

// FLOPs a flash-attention kernel executes: forward 2·b·h·(d + d_v)·(unmasked query-key pairs)
// (QK^T and PV), backward 2.5 times that (five matmuls against two).
double attention_flops(const AttentionCall& call);

class ComputeModel {
 public:
  // Keeps references to `profile` and `warnings`; both must outlive the model.
  ComputeModel(const config::HardwareProfile& profile, WarningLog* warnings);

  // C[m x n] = A[m x k] B[k x n] in `dtype`; `groups` such products in one grouped kernel, whose
  // thread-block tiles share the GPU's waves (measured tables are read at the stacked shape
  // (groups * m) x n x k).
  double gemm_s(int64_t m, int64_t n, int64_t k, config::Dtype dtype, int64_t groups = 1) const;
  double attention_s(const AttentionCall& call) const;
  // A kernel bound by HBM traffic of `bytes` (read + written).
  double memory_s(double bytes) const;
  double kernel_launch_s() const { return launch_s_; }
  double host_sync_s() const { return host_sync_s_; }
  // Host time to issue one op, from the stack profile (0 without one: the host is never behind).
  double host_dispatch_s() const { return stack_[config::StackParameter::kHostDispatch]; }
  // Fraction by which compute slows while NCCL kernels share the SMs.
  double comm_compute_slowdown() const { return profile_.compute.comm_compute_slowdown; }
  // Dense peak FLOP/s for `dtype` (throws std::invalid_argument when the profile has none).
  double peak_flops_per_s(config::Dtype dtype) const;

 private:
  double efficiency_or_one(double value, const char* key) const;
  // The roofline's GEMM ceiling for `dtype`.
  double gemm_efficiency(config::Dtype dtype) const;

  const config::HardwareProfile& profile_;
  WarningLog* warnings_;
  config::StackParameters stack_;  // neutral without a stack profile
  double launch_s_;
  double host_sync_s_;
};

}  // namespace trainsim::cost

#endif  // TRAINSIM_SIM_COST_COMPUTE_MODEL_H_
