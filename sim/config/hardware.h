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

#include "sim/config/types.h"

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

struct Provenance {
  ProvenanceKind kind = ProvenanceKind::kCited;
  std::string date;          // ISO 8601
  std::string tool_version;  // for measured profiles
  std::string command;       // for measured profiles
  std::string notes;
};

struct HardwareProfile {
  std::filesystem::path path;  // absolute, normalised
  std::string name;
  GpuSpec gpu;
  HostLink host_link;
  double host_memory_bytes = 0;  // of the node the profile describes; the topology may override
  Provenance provenance;
  std::map<std::string, std::string> sources;  // dotted key prefix -> citation or "measured"
  std::string content_hash;                    // of the file's bytes, for provenance

  // The dense peak for `dtype`, if the profile has one.
  std::optional<double> peak_flops_per_s(Dtype dtype) const;
  // The source that covers the dotted `key` (longest matching prefix), empty when none.
  std::string source_of(const std::string& key) const;
};

}  // namespace trainsim::config

#endif  // TRAINSIM_SIM_CONFIG_HARDWARE_H_
