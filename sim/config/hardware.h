// Typed hardware profile: the properties of one GPU type (and the host link of the node it was
// measured on). Produced by `load_hardware` (sim/config/loader.h) from files that calibrate/ writes or
// that cite public sources. Every number carries a source: `sources` maps a dotted key (or a prefix
// of one) to where the number came from, and the loader refuses a number without one.
#ifndef TRAINSIM_SIM_CONFIG_HARDWARE_H_
#define TRAINSIM_SIM_CONFIG_HARDWARE_H_

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sim/config/stack.h"
#include "sim/config/types.h"
#include "sim/config/what_if.h"

namespace trainsim::config {

struct GpuSpec {
  std::string name;  // as the vendor names it, e.g. "NVIDIA A100-SXM4-80GB"
  int64_t sm_count = 0;
  double clock_hz = 0;                       // boost clock, 0 when unknown
  std::map<Dtype, double> peak_flops_per_s;  // dense (no sparsity) peak per dtype
  double hbm_capacity_bytes = 0;
  double hbm_bandwidth_bytes_per_s = 0;
};

struct HostLink {
  int pcie_generation = 0;
  double h2d_bandwidth_bytes_per_s = 0;  // pinned host-to-device, one GPU copying
  double d2h_bandwidth_bytes_per_s = 0;
  double latency_s = 0;  // per copy
};

// How fast kernels run where no measured table covers them (a roofline scaled by achievable
// efficiencies), and the fixed overheads around them. 0 means "not given": the cost model then
// falls back to the ideal value and says so in its warnings.
struct ComputeModel {
  double gemm_efficiency = 0;                // achievable fraction of peak on large dense GEMMs
  double attention_forward_efficiency = 0;   // flash-attention forward, long blocks
  double attention_backward_efficiency = 0;  // its backward
  double memory_efficiency = 0;              // achievable fraction of HBM bandwidth
  double kernel_launch_s = 0;                // per kernel, when it is not hidden behind the previous one
  double host_sync_s = 0;                    // cudaStreamSynchronize round trip
  double comm_compute_slowdown = 0;          // compute slows by this fraction while NCCL kernels run
  double gemm_efficiency_fp8 = 0;            // gemm_efficiency for fp8 GEMMs (0: gemm_efficiency, warned)
  // The kernel the attention efficiencies were measured or published for; its tiling prices the waves
  // of each call. Unset: every call runs at the efficiency's rate.
  std::optional<FusedAttentionKernel> attention_kernel;
};

// Device memory the software stack holds on every GPU outside the framework's tensors, which peak HBM
// counts beside them (memory category "runtime"). NCCL allocates its buffers per communicator and
// per connected peer when a communicator first runs an operation, so a rank pays only for the groups
// and peers its graph uses (sim/workload/runtime_memory.h). A key left out counts 0.
struct RuntimeMemory {
  // The CUDA context with its loaded modules, and library handles.
  double context_bytes = 0;
  // NCCL's channel buffers of one communicator that runs ring/tree collectives.
  double collective_communicator_bytes = 0;
  // NCCL's buffers per peer of an all-to-all or a send/receive in the same node, and on another node.
  double p2p_peer_in_node_bytes = 0;
  double p2p_peer_across_nodes_bytes = 0;
};

// What one GPU draws (board power, in W) in each state a training step passes it through
// (sim/report/power.h): a tensor-core kernel running (GEMMs, attention), a memory-bound kernel (the
// element-wise passes, the optimizer step), only communication or host copies (NCCL's kernels on a few
// SMs, the copy engines), nothing. idle <= every other state <= limit.
struct GpuPower {
  double limit_w = 0;          // the board's power limit (TDP)
  double idle_w = 0;           // nothing running
  double compute_w = 0;        // tensor-core kernels, sustained
  double memory_w = 0;         // memory-bound kernels
  double communication_w = 0;  // only collectives, sends/receives or host copies
};

// How the repetitions behind a measured median spread (the keys `min`, `p90`, `repetitions` of a
// sample row). 0 means "not recorded": cited, imported and derived samples, and profiles written
// before these keys. When recorded, min_s <= the sample's duration_s <= p90_s.
struct SampleSpread {
  double min_s = 0;         // the fastest repetition
  double p90_s = 0;         // the 90th percentile of the repetitions (nearest rank)
  int64_t repetitions = 0;  // timed repetitions the median is of
};

// Measured points (from `trainsim calibrate` or imported logs). Times are medians.
struct GemmSample {
  Dtype dtype = Dtype::kBf16;
  int64_t m = 0, n = 0, k = 0;
  double duration_s = 0;
  SampleSpread spread{};
};

struct AttentionSample {
  AttentionPass pass = AttentionPass::kForward;
  bool causal = false;
  Dtype dtype = Dtype::kBf16;
  int64_t batch = 1, heads = 0, kv_heads = 0, q_len = 0, kv_len = 0, head_dim = 0;
  double duration_s = 0;
  SampleSpread spread{};
};

// One nccl-tests style point: `bytes` is nccl-tests' "size" for `kind` over `ranks` GPUs on `nodes`.
struct CollectiveSample {
  CollectiveKind kind = CollectiveKind::kAllReduce;
  int64_t ranks = 0;
  int64_t nodes = 1;
  double bytes = 0;
  double duration_s = 0;
  SampleSpread spread{};
  std::optional<CollectiveAlgorithm> algorithm;  // absent: NCCL's own choice
};

// A latency/bandwidth model of one collective over one size range: time = latency + bytes /
// bus_bandwidth * (bus-bandwidth factor of the kind), as nccl-tests defines busbw.
struct CollectiveFit {
  CollectiveKind kind = CollectiveKind::kAllReduce;
  int64_t ranks = 0;
  int64_t nodes = 1;
  double min_bytes = 0;
  double max_bytes = 0;
  double latency_s = 0;
  double bus_bandwidth_bytes_per_s = 0;
  std::optional<CollectiveAlgorithm> algorithm;  // of the samples it was fitted to; absent: NCCL's choice
};

// Pinned host<->device copies with `concurrent_gpus` GPUs of the node copying at once.
struct CopySample {
  CopyDirection direction = CopyDirection::kHostToDevice;
  int64_t concurrent_gpus = 1;
  double bytes = 0;
  double duration_s = 0;
  SampleSpread spread{};
};

// What using one GPU costs, for cost objectives (`trainsim search --objective tokens_per_dollar`).
// Prices are in US dollars; a profile without a citable price leaves the section out.
struct Cost {
  std::optional<double> price_per_gpu_hour_usd;  // on-demand or list price of one GPU for one hour
};

// The software a measured profile was timed with (`provenance.software`), each as its library reports
// its version; empty = unknown or not applicable (the CPU backend has no driver, CUDA, cuBLASLt or NCCL).
struct SoftwareVersions {
  std::string driver;        // NVIDIA driver, e.g. "580.159.04"
  std::string cuda_runtime;  // e.g. "13.0"
  std::string blas;          // cuBLASLt, e.g. "13.1.0"
  std::string collectives;   // NCCL, e.g. "2.28.9"
  std::string compiler;      // that built the timed CPU reference kernels (CPU backend), e.g. "GCC 12.2.0"
  std::string attention_kernel;  // the attention implementation timed: "mma.sync", "wgmma", "reference"
};

// The machine a measured profile was timed on (`provenance.host`); empty = unknown.
struct HostInfo {
  std::string cpu;   // the host CPU's model name, e.g. "Intel(R) Xeon(R) Platinum 8480+"
  std::string name;  // the host name
};

struct Provenance {
  ProvenanceKind kind = ProvenanceKind::kCited;
  std::string date;          // ISO 8601
  std::string tool_version;  // for measured profiles
  std::string command;       // for measured profiles
  std::string notes;
  SoftwareVersions software{};  // for measured profiles
  HostInfo host{};              // for measured profiles
};

struct HardwareProfile {
  std::filesystem::path path;  // absolute, normalised
  std::string name;
  GpuSpec gpu;
  HostLink host_link;
  double host_memory_bytes = 0;  // of the node the profile describes; the topology may override
  ComputeModel compute;
  std::optional<RuntimeMemory> runtime_memory;  // absent: the profile does not say (not counted)
  std::optional<GpuPower> power;                // absent: the profile does not say (no power report)
  std::vector<GemmSample> gemm_samples;
  std::vector<AttentionSample> attention_samples;
  std::vector<CollectiveSample> collective_samples;
  std::vector<CollectiveFit> collective_fits;
  std::vector<CopySample> copy_samples;
  Cost cost;
  // What the software stack achieves on this hardware, when the file is a stack profile (stack.h);
  // absent: the hardware profile's numbers apply as they are.
  std::optional<StackProfile> stack;
  Provenance provenance;
  std::map<std::string, std::string> sources;  // dotted key prefix -> citation or "measured"
  std::string content_hash;                    // of the file's bytes, for provenance
  // The values a scenario, cluster file or --set put over the file's (what_if.h); they need no entry
  // in `sources`: the reports name them, and where they were written, instead.
  std::vector<WhatIf> what_if;

  // The dense peak for `dtype`, if the profile has one.
  std::optional<double> peak_flops_per_s(Dtype dtype) const;
  // The source that covers the dotted `key` (longest matching prefix), empty when none.
  std::string source_of(const std::string& key) const;
};

}  // namespace trainsim::config

#endif  // TRAINSIM_SIM_CONFIG_HARDWARE_H_
