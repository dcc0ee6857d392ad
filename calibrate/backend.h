// The point of variation of the harness (the LevelDB `Env` pattern): a Backend times kernels,
// copies and collectives on one kind of device. The CUDA backend times the kernels of kernels/
// (cuBLASLt, the FPDT attention kernels, NCCL, pinned copies) with CUDA events; the CPU backend
// times their CPU references with std::chrono, so the whole harness -> profile -> simulator
// pipeline runs (and is tested) on machines without a GPU. Tests substitute a fake.
#ifndef TRAINSIM_CALIBRATE_BACKEND_H_
#define TRAINSIM_CALIBRATE_BACKEND_H_

#include <string>
#include <vector>

#include "calibrate/cases.h"
#include "sim/config/types.h"

namespace trainsim::calibrate {

// What the device and its software are, for the profile's gpu section and provenance. Fields the
// backend cannot know stay empty or 0.
struct DeviceFacts {
  std::string backend;          // "cuda" or "cpu"
  std::string device_name;      // as the driver names it ("NVIDIA H200"), or "cpu: <model name>"
  int devices = 1;              // GPUs (or CPU worker threads standing for them) the run may use
  int64_t multiprocessors = 0;  // SMs, or CPU cores
  double clock_hz = 0;          // maximum SM (or core) clock
  double memory_bytes = 0;      // device memory; host RAM for the CPU backend
  double cache_bytes = 0;       // last-level cache (L2 on a GPU): rotating buffers outgrow it
  double host_memory_bytes = 0;
  // Device memory in use once the CUDA context and the BLAS handle exist, before any buffer of the
  // calibration (total - free of device 0; another process on the GPU would count too); 0 = not
  // measured (the CPU backend).
  double context_bytes = 0;
  int pcie_generation = 0;
  std::string driver_version;       // NVIDIA driver
  std::string runtime_version;      // CUDA runtime
  std::string blas_version;         // cuBLASLt
  std::string collectives_version;  // NCCL
  std::string compiler;             // that built the timed CPU reference kernels (CPU backend)
  std::string attention_kernel;     // the attention implementation timed: "mma.sync", "wgmma", "reference"
  std::string host_name;
  std::string host_cpu;
};

// Which size grids fit the backend (the CPU references are ~10^4 times slower than a GPU).
enum class DeviceScale { kGpu, kCpuReference };

struct Capabilities {
  DeviceScale scale = DeviceScale::kGpu;
  std::vector<config::Dtype> gemm_dtypes;
  std::vector<config::Dtype> attention_dtypes;
  std::vector<int64_t> attention_head_dims;
  double max_case_flops = 0;  // larger compute cases (e.g. from --scenario) are skipped
};

// How each case is timed: `warmup` untimed runs, then `repetitions` timed repetitions. A
// repetition runs the case back to back until it lasts at least `min_repetition_s` (so short
// kernels are not lost in timer resolution and launch gaps) and reports the mean per run; each run
// reads the next of a rotating set of buffers, together larger than the device's last-level cache,
// so no run finds its inputs cached by the previous one. On a GPU the case then runs back to back
// for `settle_s` more before the first timed repetition, with no synchronisation in between, so a
// power-capped device has settled at the clock that case sustains (an H200 at its 700 W cap was
// seen running large bf16 GEMMs at 1.45-1.56 GHz instead of 1.98 GHz): samples do not depend on
// what ran before them.
struct TimingPolicy {
  int warmup = 2;
  int repetitions = 10;
  double min_repetition_s = 0;
  int max_runs_per_repetition = 1000;
  double settle_s = 0;
};

// The rotating buffer sets of a TimingPolicy: next() is 0, 1, ..., sets - 1, 0, ... (one set when
// `sets` < 1).
class SetRotation {
 public:
  explicit SetRotation(int sets) : sets_(sets < 1 ? 1 : sets) {}
  int next() {
    const int current = set_;
    set_ = (set_ + 1) % sets_;
    return current;
  }

 private:
  int sets_;
  int set_ = 0;
};

// Fixed overheads around kernels, one entry per timed repetition.
struct OverheadSamples {
  std::vector<double> launch_s;     // one kernel launch, back to back (not hidden by the previous)
  std::vector<double> host_sync_s;  // a host synchronisation with an idle device, launch excluded
  // FPDT: per attention block, what DeepSpeed's host syncs add to the real pipeline (its forward
  // with FpdtSync::kHostSyncs minus with kEvents); empty when the backend has no such pipeline.
  std::vector<double> pipeline_sync_s;
};

// GEMM durations alone and while a collective runs concurrently (interference).
struct InterferenceSamples {
  std::vector<double> alone_s;
  std::vector<double> concurrent_s;
  // False when the collective finished before the concurrent GEMMs did (the slowdown is then
  // underestimated).
  bool overlapped = true;
};

// What device 0 draws (board power, averaged over a hold), in the states the simulator's power model
// distinguishes that one GPU can hold alone, and the limit the driver enforces.
struct PowerSamples {
  double limit_w = 0;
  double idle_w = 0;     // a context and nothing running
  double compute_w = 0;  // a large GEMM back to back
  double memory_w = 0;   // a large device-to-device copy back to back
};

// Every method times one case and returns one duration per timed repetition (seconds per run), or
// throws: std::invalid_argument for a case this backend cannot run, kernels::GpuError (a
// std::runtime_error) when the device fails. Not thread-safe: one harness drives one backend.
class Backend {
 public:
  virtual ~Backend() = default;

  virtual const DeviceFacts& facts() const = 0;
  virtual const Capabilities& capabilities() const = 0;

  virtual std::vector<double> time_gemm(const GemmCase& c, const TimingPolicy& policy) = 0;
  virtual std::vector<double> time_attention(const AttentionCase& c, const TimingPolicy& policy) = 0;
  // `c.ranks` is at most facts().devices.
  virtual std::vector<double> time_collective(const CollectiveCase& c, const TimingPolicy& policy) = 0;
  // `c.concurrent` is at most facts().devices; the duration is the slowest of the concurrent copies.
  virtual std::vector<double> time_copy(const CopyCase& c, const TimingPolicy& policy) = 0;
  // A device-to-device copy of `bytes` (which reads and writes `bytes` each): memory bandwidth.
  virtual std::vector<double> time_device_copy(double bytes, const TimingPolicy& policy) = 0;
  virtual OverheadSamples time_overheads(const TimingPolicy& policy) = 0;
  // `gemm` on device 0, alone and while `collective` runs over the first collective.ranks devices.
  virtual InterferenceSamples time_interference(const GemmCase& gemm, const CollectiveCase& collective,
                                                const TimingPolicy& policy) = 0;
  // Device 0's power: idle, running `gemm` and copying `copy_bytes` device to device, each state held
  // `hold_s` after as long again to settle. Throws std::invalid_argument when the backend cannot read
  // the device's power (the CPU backend; a driver without NVML's energy counter).
  virtual PowerSamples measure_power(const GemmCase& gemm, double copy_bytes, double hold_s) = 0;
};

// Runs per repetition that make one repetition last `min_repetition_s`, given one run of
// `single_run_s`: at least 1, at most policy.max_runs_per_repetition.
int runs_per_repetition(double single_run_s, const TimingPolicy& policy);

// How many copies of a working set of `working_set_bytes` to rotate through so that together they
// exceed twice `cache_bytes`, within `budget_bytes` of memory: at least 1, at most 16384.
int rotation_sets(double working_set_bytes, double cache_bytes, double budget_bytes);

}  // namespace trainsim::calibrate

#endif  // TRAINSIM_CALIBRATE_BACKEND_H_
