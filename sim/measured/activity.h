// What a GPU did during one training step, as a profiler records it or as the simulator plays it:
// activities (kernels and copies) of a few classes, and the step's time split by what ran. Measured
// traces (kineto_trace.h) and simulated runs (report/compare.h) are both reduced to this, by the
// same code, so that a comparison of the two compares like with like.
#ifndef TRAINSIM_SIM_MEASURED_ACTIVITY_H_
#define TRAINSIM_SIM_MEASURED_ACTIVITY_H_

#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

namespace trainsim::measured {

enum class ActivityClass : uint8_t {
  kGemm,       // dense or grouped matmuls (cuBLAS, cuBLASLt, CUTLASS)
  kAttention,  // fused attention kernels (FlashAttention, cuDNN, Transformer Engine)
  kMemory,     // memory-bound kernels: norms, activations, softmax, casts, device copies, memsets
  kOptimizer,  // optimizer updates and the gradient norm
  kAllReduce,  // NCCL collectives by kind
  kAllGather,
  kReduceScatter,
  kOtherCollective,  // broadcast, reduce, barrier
  kSendRecv,         // NCCL send/receive: pipeline transfers and all-to-alls (NCCL runs both as SendRecv)
  kHostCopy,         // copies between host and device memory
};
inline constexpr int kActivityClassCount = 10;

// "gemm", "attention", ..., as reports print them.
std::string_view to_string(ActivityClass cls);
// Kernels that compute (the first four classes), communication (the NCCL classes), host copies.
bool is_compute(ActivityClass cls);
bool is_communication(ActivityClass cls);

struct Activity {
  ActivityClass cls = ActivityClass::kMemory;
  double begin_s = 0;
  double end_s = 0;
};

struct ClassTotal {
  double time_s = 0;  // the activities' durations summed (overlapping ones each count)
  double count = 0;   // activities (a mean over steps need not be whole)
};

// One step of one GPU. Every second of the step is in exactly one of the last four fields: compute
// (any compute kernel running), exposed communication (communication and no compute), exposed host
// copy (a host copy and neither of the others), idle (nothing: the GPU waited for the host, a
// pipeline peer, a synchronisation).
struct StepProfile {
  double step_s = 0;
  std::array<ClassTotal, kActivityClassCount> by_class{};
  double compute_s = 0;
  double exposed_comm_s = 0;
  double exposed_copy_s = 0;
  double idle_s = 0;

  const ClassTotal& of(ActivityClass cls) const { return by_class[static_cast<size_t>(cls)]; }
};

// The profile of the step [begin_s, end_s] (end_s >= begin_s) from `activities`, each clipped to the
// step (an activity wholly outside it counts nowhere).
StepProfile profile_step(const std::vector<Activity>& activities, double begin_s, double end_s);

// The field-by-field mean of `steps` (not empty).
StepProfile mean_profile(const std::vector<StepProfile>& steps);

}  // namespace trainsim::measured

#endif  // TRAINSIM_SIM_MEASURED_ACTIVITY_H_
