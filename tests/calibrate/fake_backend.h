// A Backend with known, deterministic timings (a roofline for kernels, alpha-beta for collectives
// and copies): tests of the harness, fitting and profile writing check that what comes out is what
// went in.
#ifndef TRAINSIM_TESTS_CALIBRATE_FAKE_BACKEND_H_
#define TRAINSIM_TESTS_CALIBRATE_FAKE_BACKEND_H_

#include <vector>

#include "calibrate/backend.h"

namespace trainsim::calibrate::testing {

class FakeBackend : public Backend {
 public:
  static constexpr double kGemmFlopsPerS = 500e12;
  static constexpr double kAttentionFlopsPerS = 300e12;
  static constexpr double kCopyLatencyS = 2e-6;
  static constexpr double kCopyBytesPerS = 50e9;
  static constexpr double kDeviceCopyBytesPerS = 3000e9;  // read + write
  static constexpr double kCollectiveLatencyS = 10e-6;
  static constexpr double kBusBytesPerS = 400e9;
  static constexpr double kLaunchS = 3e-6;
  static constexpr double kHostSyncS = 8e-6;
  static constexpr double kSlowdown = 0.125;
  static constexpr double kContextBytes = 523e6;
  static constexpr PowerSamples kPower = {700, 85, 680, 420};

  // `devices` GPUs at GPU scale (bf16, fp16; head dims 64, 128).
  explicit FakeBackend(int devices);

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

  int calls() const { return calls_; }

 private:
  std::vector<double> repeat(double seconds, const TimingPolicy& policy);

  DeviceFacts facts_;
  Capabilities capabilities_;
  int calls_ = 0;
};

}  // namespace trainsim::calibrate::testing

#endif  // TRAINSIM_TESTS_CALIBRATE_FAKE_BACKEND_H_
