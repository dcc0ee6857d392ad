// The CUDA backend: times the kernels of kernels/ on the GPUs of this node with CUDA events —
// cuBLASLt GEMMs, the FPDT attention block kernels and the FPDT pipeline, NCCL collectives over
// every group size, pinned host<->device copies from several GPUs at once, device-to-device copies,
// launch and synchronisation overheads, and a GEMM slowed by a concurrent NCCL collective.
#ifndef TRAINSIM_CALIBRATE_CUDA_CUDA_BACKEND_H_
#define TRAINSIM_CALIBRATE_CUDA_CUDA_BACKEND_H_

#include <map>
#include <memory>
#include <vector>

#include "calibrate/backend.h"
#include "calibrate/cuda/collective_bench.h"
#include "kernels/attention/attention_launch.h"
#include "kernels/cuda/device_buffer.h"
#include "kernels/cuda/pinned_buffer.h"
#include "kernels/cuda/stream.h"
#include "kernels/gemm/gemm.h"

namespace trainsim::calibrate::cuda {

class CudaBackend : public Backend {
 public:
  // Uses GPUs 0..devices-1 (1 <= devices <= the node's GPUs) and times `attention` for the attention
  // cases. Throws std::invalid_argument for a bad count or a kernel the device cannot run, GpuError
  // when the runtime fails.
  CudaBackend(int devices, kernels::AttentionKernel attention);
  ~CudaBackend() override;

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
  // Pinned and device buffers of one GPU for host copies, grown on demand.
  struct CopyBuffers {
    kernels::PinnedBuffer<std::byte> host;
    kernels::DeviceBuffer<std::byte> device;
    kernels::Stream stream;
  };

  // A planned GEMM with its rotating, filled buffers, ready to time (and time again).
  struct PreparedGemm {
    struct Set {
      kernels::DeviceBuffer<std::byte> a, b, d;
    };
    PreparedGemm(kernels::BlasLt& blas, const kernels::GemmShape& shape, const kernels::GemmTypes& types);
    std::vector<double> time(cudaStream_t stream, const TimingPolicy& policy);

    kernels::GemmPlan plan;
    std::vector<Set> sets;
  };

  std::unique_ptr<PreparedGemm> prepare_gemm(const GemmCase& c, cudaStream_t stream);
  CollectiveBench& bench(int ranks);
  std::vector<double> fpdt_sync_overhead(const TimingPolicy& policy);

  DeviceFacts facts_;
  Capabilities capabilities_;
  int compute_major_ = 0;
  int compute_minor_ = 0;
  kernels::AttentionKernel attention_ = kernels::AttentionKernel::kMmaSync;
  double host_cache_bytes_ = 0;
  std::unique_ptr<kernels::BlasLt> blas_;
  kernels::Stream stream_;  // device 0's compute stream (device 0 is current when the backend is made)
  std::map<int, std::unique_ptr<CollectiveBench>> benches_;
  std::vector<std::unique_ptr<CopyBuffers>> copy_buffers_;  // per device
};

}  // namespace trainsim::calibrate::cuda

#endif  // TRAINSIM_CALIBRATE_CUDA_CUDA_BACKEND_H_
