#include "calibrate/report.h"

#include <optional>
#include <sstream>

#include <fmt/format.h>

#include "calibrate/profile/builder.h"
#include "sim/config/units.h"

namespace trainsim::calibrate {
namespace {

using config::QuantityKind;

std::string quantity(double value, QuantityKind kind) { return config::format_quantity(value, kind); }

}  // namespace

std::string profile_summary(const ProfileDocument& doc) {
  const config::HardwareProfile& p = doc.profile;
  std::ostringstream out;
  out << fmt::format("# profile {}: {}\n", p.name, p.gpu.name);
  for (const auto& [dtype, peak] : p.gpu.peak_flops_per_s) {
    out << fmt::format("#   peak {:<5} {:>14}  ({})\n", config::to_string(dtype),
                       quantity(peak, QuantityKind::kFlopRate),
                       p.source_of(fmt::format("gpu.peak_flops.{}", config::to_string(dtype))));
  }
  const config::ComputeModel& c = p.compute;
  out << fmt::format(
      "#   efficiency: GEMM {:.3g}, attention forward {:.3g}, backward {:.3g}, memory {:.3g}\n",
      c.gemm_efficiency, c.attention_forward_efficiency, c.attention_backward_efficiency,
      c.memory_efficiency);
  out << fmt::format("#   memory {} ({}), host link h2d {} d2h {} latency {}\n",
                     quantity(p.gpu.hbm_bandwidth_bytes_per_s, QuantityKind::kBandwidth),
                     readable_quantity(p.gpu.hbm_capacity_bytes, QuantityKind::kBytes),
                     quantity(p.host_link.h2d_bandwidth_bytes_per_s, QuantityKind::kBandwidth),
                     quantity(p.host_link.d2h_bandwidth_bytes_per_s, QuantityKind::kBandwidth),
                     quantity(p.host_link.latency_s, QuantityKind::kDuration));
  out << fmt::format("#   kernel launch {}, host sync {}, compute slowdown under NCCL {:.1f}%\n",
                     quantity(c.kernel_launch_s, QuantityKind::kDuration),
                     quantity(c.host_sync_s, QuantityKind::kDuration), 100.0 * c.comm_compute_slowdown);
  if (const std::optional<config::GpuPower>& w = p.power) {
    out << fmt::format(
        "#   power: limit {}, idle {}, compute {}, memory {}, communication {} ({})\n",
        quantity(w->limit_w, QuantityKind::kPower), quantity(w->idle_w, QuantityKind::kPower),
        quantity(w->compute_w, QuantityKind::kPower), quantity(w->memory_w, QuantityKind::kPower),
        quantity(w->communication_w, QuantityKind::kPower),
        p.source_of("power.idle").rfind("measured:", 0) == 0 ? "measured; communication from the base"
                                                             : "from the base");
  }
  out << fmt::format("#   samples: {} GEMM, {} attention, {} collective, {} copy; {} collective fits\n",
                     p.gemm_samples.size(), p.attention_samples.size(), p.collective_samples.size(),
                     p.copy_samples.size(), p.collective_fits.size());
  for (const std::string& w : doc.warnings) out << "# warning: " << w << '\n';
  if (p.collective_fits.empty()) return out.str();
  out << "#\n# collective fits: time = latency + size x busbw factor / busbw (nccl-tests size and busbw)\n";
  out << fmt::format("# {:<14} {:>5} {:>5} {:>10} {:>10} {:>10} {:>12}  {}\n", "collective", "ranks", "nodes",
                     "min size", "max size", "latency", "busbw", "goodness of fit");
  for (size_t i = 0; i < p.collective_fits.size(); ++i) {
    const config::CollectiveFit& f = p.collective_fits[i];
    out << fmt::format("  {:<14} {:>5} {:>5} {:>10} {:>10} {:>10} {:>12}  {}\n", config::to_string(f.kind),
                       f.ranks, f.nodes, quantity(f.min_bytes, QuantityKind::kBytes),
                       quantity(f.max_bytes, QuantityKind::kBytes),
                       quantity(f.latency_s, QuantityKind::kDuration),
                       quantity(f.bus_bandwidth_bytes_per_s, QuantityKind::kBandwidth),
                       i < doc.collective_fit_comments.size() ? doc.collective_fit_comments[i] : "");
  }
  return out.str();
}

}  // namespace trainsim::calibrate
