#include "calibrate/scaling/scale.h"

#include <stdexcept>

#include <fmt/format.h>

#include "calibrate/fit/collective_fits.h"
#include "calibrate/profile/builder.h"
#include "sim/config/units.h"

namespace trainsim::calibrate {
namespace {

using config::Dtype;

std::string bandwidth(double value) {
  return config::format_quantity(value, config::QuantityKind::kBandwidth);
}

// The row of a derived table: the measured row without its spread, which was the measured GPU's.
template <class Sample>
Sample without_spread(Sample row) {
  row.spread = {};
  return row;
}

}  // namespace

ProfileDocument scale_profile(const config::HardwareProfile& measured, const config::HardwareProfile& target,
                              const ScaleOptions& o) {
  if (measured.provenance.kind != config::ProvenanceKind::kMeasured &&
      measured.provenance.kind != config::ProvenanceKind::kImported) {
    throw std::invalid_argument(fmt::format("{} is a {} profile; scale a measured one", o.measured_label,
                                            config::to_string(measured.provenance.kind)));
  }
  if (o.from_network.has_value() != o.to_network.has_value()) {
    throw std::invalid_argument("name both fabrics (--from-network and --to-network) or neither");
  }
  if (o.from_network && o.from_network->tier != o.to_network->tier) {
    throw std::invalid_argument(fmt::format("network parts {} and {} are of different tiers",
                                            o.from_network->name, o.to_network->name));
  }
  ProfileDocument doc;
  config::HardwareProfile& p = doc.profile;
  p = target;
  p.path.clear();
  p.content_hash.clear();
  p.name = o.name.empty() ? target.name + "-derived" : o.name;
  p.gemm_samples.clear();
  p.attention_samples.clear();
  p.collective_samples.clear();
  p.collective_fits.clear();
  p.copy_samples.clear();
  for (auto it = p.sources.begin(); it != p.sources.end();) {  // the target's tables are replaced
    const bool table = it->first.rfind("gemm_samples", 0) == 0 ||
                       it->first.rfind("attention_samples", 0) == 0 ||
                       it->first.rfind("collective_", 0) == 0 || it->first.rfind("copy_samples", 0) == 0 ||
                       it->first.rfind("compute", 0) == 0;
    it = table ? p.sources.erase(it) : std::next(it);
  }
  std::vector<std::string> notes;
  const auto ratio_of = [&](Dtype dtype) -> std::optional<double> {
    const std::optional<double> from = measured.peak_flops_per_s(dtype);
    const std::optional<double> to = target.peak_flops_per_s(dtype);
    if (!from || !to) return std::nullopt;
    return *from / *to;
  };
  const std::string pair = fmt::format("{} scaled to {}", o.measured_label, o.target_label);

  for (const config::GemmSample& s : measured.gemm_samples) {
    const std::optional<double> r = ratio_of(s.dtype);
    if (!r) continue;
    config::GemmSample scaled = without_spread(s);
    scaled.duration_s = round_significant(s.duration_s * *r);
    p.gemm_samples.push_back(scaled);
  }
  for (const config::AttentionSample& s : measured.attention_samples) {
    const std::optional<double> r = ratio_of(s.dtype);
    if (!r) continue;
    config::AttentionSample scaled = without_spread(s);
    scaled.duration_s = round_significant(s.duration_s * *r);
    p.attention_samples.push_back(scaled);
  }
  const std::string by_peak = fmt::format(
      "derived: {}: measured time x (measured peak / target peak) of the dtype, i.e. the same fraction of "
      "peak",
      pair);
  if (!p.gemm_samples.empty()) p.sources["gemm_samples"] = by_peak;
  if (!p.attention_samples.empty()) p.sources["attention_samples"] = by_peak;

  p.compute = measured.compute;
  for (const char* key : {"gemm_efficiency", "gemm_efficiency_fp8", "attention_forward_efficiency",
                          "attention_backward_efficiency", "memory_efficiency", "kernel_launch", "host_sync",
                          "comm_compute_slowdown", "attention_kernel"}) {
    const std::string path = std::string("compute.") + key;
    const std::string source = measured.source_of(path);
    if (!source.empty())
      p.sources[path] = fmt::format("from {} (assumed to carry over): {}", o.measured_label, source);
  }

  const config::HostLink& from_link = measured.host_link;
  for (const config::CopySample& s : measured.copy_samples) {
    const bool h2d = s.direction == config::CopyDirection::kHostToDevice;
    const double r = h2d ? from_link.h2d_bandwidth_bytes_per_s / target.host_link.h2d_bandwidth_bytes_per_s
                         : from_link.d2h_bandwidth_bytes_per_s / target.host_link.d2h_bandwidth_bytes_per_s;
    const double latency = std::min(from_link.latency_s, s.duration_s);
    config::CopySample scaled = without_spread(s);
    scaled.duration_s = round_significant(latency + (s.duration_s - latency) * r);
    p.copy_samples.push_back(scaled);
  }
  if (!p.copy_samples.empty()) {
    p.sources["copy_samples"] =
        fmt::format("derived: {}: latency ({}) kept, the rest x (measured / target host_link bandwidth)",
                    pair, config::format_quantity(from_link.latency_s, config::QuantityKind::kDuration));
  }

  if (o.from_network) {
    const NetworkPart& from = *o.from_network;
    const NetworkPart& to = *o.to_network;
    const double r = to.bandwidth_bytes_per_s / from.bandwidth_bytes_per_s;
    const auto in_tier = [&](int64_t nodes) {
      return from.tier == NetworkTier::kIntraNode ? nodes == 1
                                                  : from.tier == NetworkTier::kInterNode && nodes > 1;
    };
    for (const config::CollectiveFit& f : measured.collective_fits) {
      if (!in_tier(f.nodes)) continue;
      config::CollectiveFit scaled = f;
      scaled.bus_bandwidth_bytes_per_s = round_significant(f.bus_bandwidth_bytes_per_s * r);
      p.collective_fits.push_back(scaled);
    }
    for (const config::CollectiveSample& s : measured.collective_samples) {
      if (!in_tier(s.nodes)) continue;
      config::CollectiveSample scaled = without_spread(s);
      for (const config::CollectiveFit& f : measured.collective_fits) {  // the fit covering the sample
        if (f.kind != s.kind || f.ranks != s.ranks || f.nodes != s.nodes || s.bytes < f.min_bytes ||
            s.bytes > f.max_bytes) {
          continue;
        }
        const double latency = std::min(f.latency_s, s.duration_s);
        scaled.duration_s = round_significant(latency + (s.duration_s - latency) / r);
        break;
      }
      p.collective_samples.push_back(scaled);
    }
    const std::string fabric =
        fmt::format("{} ({}, {}) to {} ({}, {})", from.name, bandwidth(from.bandwidth_bytes_per_s),
                    from.content_hash, to.name, bandwidth(to.bandwidth_bytes_per_s), to.content_hash);
    if (!p.collective_fits.empty()) {
      p.sources["collective_fits"] =
          fmt::format("derived: {}: bus bandwidth x {:.4g} for {}, latency kept", pair, r, fabric);
    }
    if (!p.collective_samples.empty()) {
      p.sources["collective_samples"] =
          fmt::format("derived: {}: time above the covering fit's latency / {:.4g} for {}", pair, r, fabric);
    }
  } else if (!measured.collective_samples.empty()) {
    notes.push_back(
        "collective tables left out: name the measured and the target fabric (--from-network, "
        "--to-network) to carry them over");
  }
  if (p.gemm_samples.empty() && p.attention_samples.empty() && p.copy_samples.empty() &&
      p.collective_fits.empty()) {
    throw std::invalid_argument(fmt::format("nothing of {} carries over to {} (no dtype in common?)",
                                            o.measured_label, o.target_label));
  }

  std::string text = fmt::format(
      "Derived by trainsim calibrate scale: the datasheet numbers of {} ({}) with the measured behaviour of "
      "{} "
      "({}, {}). Assumes the target reaches the same fraction of its peaks as the measured GPU.",
      o.target_label, target.content_hash, o.measured_label, measured.gpu.name, measured.content_hash);
  for (const std::string& n : notes) text += "\n" + n;
  // Derived on no machine: no software, no host (the measured profile names its own).
  p.provenance = {config::ProvenanceKind::kDerived, o.date, o.tool_version, o.command, text};
  doc.header.push_back(
      fmt::format("{}: {} derived from measured {}", p.name, target.gpu.name, measured.gpu.name));
  doc.header.push_back(fmt::format("{}, {}", o.tool_version, o.date));
  doc.header.push_back("command: " + o.command);
  return doc;
}

}  // namespace trainsim::calibrate
