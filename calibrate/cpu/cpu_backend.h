// The CPU backend: times the CPU references of kernels/ (GEMM, attention) with the host clock,
// host memcpy for copies and memory bandwidth, and shared-memory collectives between worker
// threads that stand for the devices of a node. It produces a valid profile for a `cpu` device, so
// the harness -> profile -> simulator pipeline runs on every CI machine.
#ifndef TRAINSIM_CALIBRATE_CPU_CPU_BACKEND_H_
#define TRAINSIM_CALIBRATE_CPU_CPU_BACKEND_H_

#include <map>
#include <memory>

#include "calibrate/backend.h"
#include "calibrate/cpu/thread_group.h"

namespace trainsim::calibrate::cpu {

class CpuBackend : public Backend {
 public:
  // `devices` worker threads stand for the devices of the node (at least 1; at most the logical
  // CPUs, since more would time-share cores). Throws std::invalid_argument otherwise.
  explicit CpuBackend(int devices);

  const DeviceFacts& facts() const override { return facts_; }
  const Capabilities& capabilities() const override { return capabilities_; }

  std::vector<double> time_gemm(const GemmCase& c, const TimingPolicy& policy) override;
  std::vector<double> time_attention(const AttentionCase& c, const TimingPolicy& policy) override;
  std::vector<double> time_collective(const CollectiveCase& c, const TimingPolicy& policy) override;
  std::vector<double> time_copy(const CopyCase& c, const TimingPolicy& policy) override;
  std::vector<double> time_device_copy(double bytes, const TimingPolicy& policy) override;
  OverheadSamples time_overheads(const TimingPolicy& policy) override;
  InterferenceSamples time_interference(const GemmCase& gemm, const CollectiveCase& collective,
                                        const TimingPolicy& policy) override;
  PowerSamples measure_power(const GemmCase& gemm, double copy_bytes, double hold_s) override;

 private:
  ThreadGroup& group(int ranks);

  DeviceFacts facts_;
  Capabilities capabilities_;
  std::map<int, std::unique_ptr<ThreadGroup>> groups_;
};

}  // namespace trainsim::calibrate::cpu

#endif  // TRAINSIM_CALIBRATE_CPU_CPU_BACKEND_H_
