// How long one kernel takes on one GPU, from a hardware profile. Measured tables win where they
// cover the shape (interpolated between samples); elsewhere a roofline with the profile's achievable
// efficiencies, floored at the kernel launch time. A stack profile's fractions (config/stack.h) then
// scale each kind of kernel's rate: GEMMs, fused attention, memory-bound passes. Every extrapolation
// beyond measured data and every missing efficiency is recorded in the WarningLog, naming the op and
// the range.
#ifndef TRAINSIM_SIM_COST_COMPUTE_MODEL_H_
#define TRAINSIM_SIM_COST_COMPUTE_MODEL_H_

#include <cstdint>
#include <memory>

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

class AttentionWaveCache;

class ComputeModel {
 public:
  // Keeps references to `profile` and `warnings`; both must outlive the model.
  ComputeModel(const config::HardwareProfile& profile, WarningLog* warnings);

  // C[m x n] = A[m x k] B[k x n] in `dtype`; `groups` such products in one grouped kernel, whose
  // thread-block tiles share the GPU's waves (measured tables are read at the stacked shape
  // (groups * m) x n x k). Without a measured table: the kernel's fixed time (kernel_launch), its
  // main loop over the waves of output tiles (tile and wave quantization, split-K), each tile's
  // output written after its main loop and split-K's reduction at the memory rate; the main loop
  // runs at the rate that makes an 8192^3 GEMM take exactly the profile's gemm_efficiency (the
  // best-shape ceiling), so smaller shapes lose their fixed and store time and their last wave.
  double gemm_s(int64_t m, int64_t n, int64_t k, config::Dtype dtype, int64_t groups = 1) const;
  // A fused attention kernel: the measured table; else, where the profile names its kernel
  // (compute.attention_kernel), the kernel's fixed time plus its blocks' waves over the SMs
  // (attention_waves.h), a step at the rate that the profile's attention efficiency gives a full GPU,
  // and for the backward its memory-bound passes; else the fixed time plus its FLOPs at that rate.
  double attention_s(const AttentionCall& call) const;
  // Whether attention_s prices the calls `profile`'s samples do not cover by its kernel's waves.
  static bool prices_attention_by_waves(const config::HardwareProfile& profile);
  // A kernel bound by HBM traffic of `bytes` (read + written): its fixed time plus the traffic at the
  // profile's memory rate.
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
  // gemm_s without measured samples, the main loop at `fraction` of its rate.
  double gemm_roofline_s(int64_t m, int64_t n, int64_t k, config::Dtype dtype, int64_t groups,
                         double fraction) const;
  // The profile's achievable HBM bandwidth (without the stack's memory fraction).
  double memory_bandwidth_bytes_per_s() const;

  const config::HardwareProfile& profile_;
  WarningLog* warnings_;
  config::StackParameters stack_;  // neutral without a stack profile
  double launch_s_;
  double host_sync_s_;
  std::shared_ptr<AttentionWaveCache> attention_waves_;  // when the profile names its kernel
};

}  // namespace trainsim::cost

#endif  // TRAINSIM_SIM_COST_COMPUTE_MODEL_H_
