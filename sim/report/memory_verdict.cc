#include "sim/report/memory_verdict.h"

#include <fmt/format.h>

#include "sim/config/units.h"

namespace trainsim::report {

using nlohmann::json;

MemoryVerdict memory_verdict(const config::Scenario& s, double peak_hbm_bytes,
                             double peak_host_bytes_per_node) {
  MemoryVerdict v;
  v.peak_hbm_bytes = peak_hbm_bytes;
  v.peak_host_bytes_per_node = peak_host_bytes_per_node;
  v.hbm_capacity_bytes = s.cluster.hardware.gpu.hbm_capacity_bytes;
  v.memory_headroom = s.training.memory_headroom;
  v.usable_hbm_bytes = s.usable_hbm_bytes();
  v.host_capacity_bytes_per_node = s.cluster.topology.node.host_memory_bytes;
  v.fits = s.memory_fits(peak_hbm_bytes, peak_host_bytes_per_node);
  return v;
}

json to_json(const MemoryVerdict& v) {
  json out = {{"peak_hbm_bytes", v.peak_hbm_bytes},
              {"peak_host_bytes_per_node", v.peak_host_bytes_per_node},
              {"fits", v.fits},
              {"hbm_capacity_bytes", v.hbm_capacity_bytes},
              {"memory_headroom", v.memory_headroom},
              {"usable_hbm_bytes", v.usable_hbm_bytes},
              {"host_capacity_bytes_per_node", v.host_capacity_bytes_per_node}};
  if (v.peak_hbm_rank) out["peak_hbm_rank"] = *v.peak_hbm_rank;
  if (!v.hbm_at_peak_bytes.empty()) out["hbm_at_peak_bytes"] = v.hbm_at_peak_bytes;
  return out;
}

MemoryVerdict memory_verdict_from_json(const json& m) {
  MemoryVerdict v;
  v.peak_hbm_bytes = m.at("peak_hbm_bytes").get<double>();
  v.peak_host_bytes_per_node = m.at("peak_host_bytes_per_node").get<double>();
  v.fits = m.at("fits").get<bool>();
  v.hbm_capacity_bytes = m.at("hbm_capacity_bytes").get<double>();
  v.memory_headroom = m.at("memory_headroom").get<double>();
  v.usable_hbm_bytes = m.at("usable_hbm_bytes").get<double>();
  v.host_capacity_bytes_per_node = m.at("host_capacity_bytes_per_node").get<double>();
  if (m.contains("peak_hbm_rank")) v.peak_hbm_rank = m.at("peak_hbm_rank").get<int64_t>();
  if (m.contains("hbm_at_peak_bytes")) v.hbm_at_peak_bytes = m.at("hbm_at_peak_bytes");
  return v;
}

std::string infeasibility(const MemoryVerdict& v) {
  std::string out;
  const double hbm = v.peak_hbm_bytes;
  const double cap = v.hbm_capacity_bytes;
  const double usable = v.usable_hbm_bytes;
  if (hbm > usable) {
    const std::string who = v.peak_hbm_rank ? fmt::format("rank {}", *v.peak_hbm_rank) : "the fullest rank";
    std::string largest;
    double largest_bytes = -1;
    for (const auto& [name, bytes] : v.hbm_at_peak_bytes) {
      if (bytes > largest_bytes) {
        largest_bytes = bytes;
        largest = name;
      }
    }
    const std::string limit =
        usable < cap ? fmt::format(
                           "{:.2f} GiB usable (the GPU's {:.2f} GiB less the {:g}% headroom of "
                           "training.memory_headroom)",
                           usable / config::kBytesPerGiB, cap / config::kBytesPerGiB, 100 * v.memory_headroom)
                     : fmt::format("{:.2f} GiB", cap / config::kBytesPerGiB);
    out += fmt::format("{} needs {:.2f} GiB of HBM at its peak but the GPU has {} (over by {:.2f} GiB{})",
                       who, hbm / config::kBytesPerGiB, limit, (hbm - usable) / config::kBytesPerGiB,
                       largest.empty() ? ""
                                       : fmt::format("; largest part: {} {:.2f} GiB", largest,
                                                     largest_bytes / config::kBytesPerGiB));
    if (hbm <= cap) {
      out +=
          "; the peak is within the bare capacity, where the caching allocator's fragmentation makes "
          "real runs fail: lower the headroom only for a measured peak (expandable_segments)";
    }
  }
  const double host = v.peak_host_bytes_per_node;
  const double host_cap = v.host_capacity_bytes_per_node;
  if (host > host_cap) {
    if (!out.empty()) out += "; ";
    out += fmt::format("a node needs {:.2f} GiB of host memory but has {:.2f} GiB (over by {:.2f} GiB)",
                       host / config::kBytesPerGiB, host_cap / config::kBytesPerGiB,
                       (host - host_cap) / config::kBytesPerGiB);
  }
  return out;
}

}  // namespace trainsim::report
