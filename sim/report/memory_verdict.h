// Whether a run fits: its memory peaks against the scenario's limits, as a report's "memory" object
// states them, and the sentence that explains an overflow.
#ifndef TRAINSIM_SIM_REPORT_MEMORY_VERDICT_H_
#define TRAINSIM_SIM_REPORT_MEMORY_VERDICT_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "sim/config/scenario.h"

namespace trainsim::report {

struct MemoryVerdict {
  double peak_hbm_bytes = 0;            // of the fullest rank
  double peak_host_bytes_per_node = 0;  // pinned host memory of the busiest node
  double hbm_capacity_bytes = 0;
  double memory_headroom = 0;  // the fraction of HBM kept free (training.memory_headroom)
  double usable_hbm_bytes = 0;
  double host_capacity_bytes_per_node = 0;
  bool fits = true;  // config::Scenario::memory_fits of the peaks
  // Of a simulated run (the closed-form estimate has neither): the fullest rank, and its HBM by
  // memory category at its peak (workload::to_string's names).
  std::optional<int64_t> peak_hbm_rank;
  std::map<std::string, double> hbm_at_peak_bytes;
};

// The verdict on peaks of `peak_hbm_bytes` and `peak_host_bytes_per_node` under `scenario`'s limits
// (no rank, no categories).
MemoryVerdict memory_verdict(const config::Scenario& scenario, double peak_hbm_bytes,
                             double peak_host_bytes_per_node);

// The keys of a report's "memory": the peaks, fits, the limits (hbm_capacity_bytes, memory_headroom,
// usable_hbm_bytes, host_capacity_bytes_per_node), and peak_hbm_rank and hbm_at_peak_bytes when set.
nlohmann::json to_json(const MemoryVerdict& verdict);
// The verdict a report's "memory" object states. Throws nlohmann::json::exception when it lacks one of
// the peaks, fits or the limits.
MemoryVerdict memory_verdict_from_json(const nlohmann::json& memory);

// The sentence explaining why the plan does not fit, naming the rank (or "the fullest rank"), the
// peak, the capacity, by how much it overflows and its largest part; empty when it fits.
std::string infeasibility(const MemoryVerdict& verdict);

}  // namespace trainsim::report

#endif  // TRAINSIM_SIM_REPORT_MEMORY_VERDICT_H_
