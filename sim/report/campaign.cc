#include "sim/report/campaign.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "sim/config/units.h"

namespace trainsim::report {

using nlohmann::json;

CampaignReport campaign_report(const config::Scenario& scenario, const analytic::CampaignEstimate& e,
                               const PowerReport* power) {
  CampaignReport out;
  out.estimate = e;
  if (e.checkpoint_every_iterations > 0) out.async_checkpoints = scenario.campaign.checkpoints->async;
  if (e.cost_usd) out.price_per_gpu_hour_usd = *scenario.cluster.hardware.cost.price_per_gpu_hour_usd;
  if (power != nullptr && std::isfinite(e.wall_time_s)) {
    // Training stops for the checkpoints the useful work writes and for each restart; the rest of
    // the wall time (useful and re-done iterations) draws the iteration's mean.
    double stopped_s = 0;
    if (e.checkpoint_interval_s > 0) {
      stopped_s += e.training_s / e.checkpoint_interval_s * e.checkpoint_pause_s;
    }
    if (const auto& i = scenario.campaign.interruptions) stopped_s += e.expected_interruptions * i->restart_s;
    stopped_s = std::clamp(stopped_s, 0.0, e.wall_time_s - e.training_s);
    CampaignEnergy energy;
    energy.it_j = power->it_mean_w * (e.wall_time_s - stopped_s) + power->it_idle_w * stopped_s;
    const config::Facility& facility = scenario.cluster.facility;
    energy.facility_j = energy.it_j * facility.pue;
    if (facility.electricity_usd_per_kwh) {
      energy.electricity_price_usd_per_kwh = *facility.electricity_usd_per_kwh;
      energy.electricity_cost_usd = energy.facility_j / 3.6e6 * *facility.electricity_usd_per_kwh;
    }
    out.energy = energy;
  }
  return out;
}

json to_json(const CampaignReport& c) {
  const analytic::CampaignEstimate& e = c.estimate;
  json out = {{"tokens", e.tokens},
              {"iterations", e.iterations},
              {"training_s", e.training_s},
              {"goodput", e.goodput},
              {"job_mtbi_s", e.job_mtbi_s},
              {"expected_interruptions", e.expected_interruptions},
              {"notes", e.notes}};
  if (std::isfinite(e.wall_time_s)) out["wall_time_s"] = e.wall_time_s;
  if (e.checkpoint_every_iterations > 0) {
    out["checkpoint"] = {{"bytes", e.checkpoint_bytes},
                         {"pause_s", e.checkpoint_pause_s},
                         {"write_s", e.checkpoint_write_s},
                         {"every_iterations", e.checkpoint_every_iterations},
                         {"interval_s", e.checkpoint_interval_s},
                         {"async", c.async_checkpoints},
                         {"snapshot_host_bytes_per_node", e.snapshot_host_bytes_per_node}};
  }
  if (e.cost_usd) {
    out["cost_usd"] = *e.cost_usd;
    out["price_per_gpu_hour_usd"] = *c.price_per_gpu_hour_usd;
  }
  if (c.energy) {
    out["energy_j"] = c.energy->it_j;
    out["facility_energy_j"] = c.energy->facility_j;
    if (c.energy->electricity_cost_usd) {
      out["electricity_price_usd_per_kwh"] = *c.energy->electricity_price_usd_per_kwh;
      out["electricity_cost_usd"] = *c.energy->electricity_cost_usd;
    }
  }
  return out;
}

namespace {

// "41.3 days" / "5.2 h" / "12.0 min" / "8.1 s": the unit that keeps a duration readable.
std::string readable_duration(double seconds) {
  if (seconds >= 2 * 86400) return fmt::format("{:.1f} days", seconds / 86400);
  if (seconds >= 2 * 3600) return fmt::format("{:.1f} h", seconds / 3600);
  if (seconds >= 120) return fmt::format("{:.1f} min", seconds / 60);
  return fmt::format("{:.3g} s", seconds);
}

// "25.9 GWh", "812 MWh", "4.1 kWh": three significant digits in the largest unit that keeps the value
// at least 1 (kWh to TWh).
std::string readable_energy(double joules) {
  const double kwh = joules / 3.6e6;
  static constexpr std::pair<double, const char*> kUnits[] = {{1e9, "TWh"}, {1e6, "GWh"}, {1e3, "MWh"}};
  for (const auto& [scale, unit] : kUnits) {
    if (kwh >= scale) return fmt::format("{:.3g} {}", kwh / scale, unit);
  }
  return fmt::format("{:.3g} kWh", kwh);
}

}  // namespace

std::string render_campaign(const CampaignReport& c) {
  const analytic::CampaignEstimate& e = c.estimate;
  std::string out = "\n# campaign\n";
  out += fmt::format("{:<26} {:>14}   ({} iterations)\n", "tokens", config::format_token_total(e.tokens),
                     e.iterations);
  out += fmt::format("{:<26} {:>14}   (iterations only)\n", "training time", readable_duration(e.training_s));
  if (e.checkpoint_every_iterations > 0) {
    out += fmt::format("{:<26} {:>14}   every {} iteration{} ({}); training pauses {} each{}\n", "checkpoint",
                       config::format_bytes_rounded(e.checkpoint_bytes), e.checkpoint_every_iterations,
                       e.checkpoint_every_iterations == 1 ? "" : "s",
                       readable_duration(e.checkpoint_interval_s), readable_duration(e.checkpoint_pause_s),
                       c.async_checkpoints ? fmt::format(", the write takes {} behind",
                                                         readable_duration(e.checkpoint_write_s))
                                           : "");
  }
  if (e.job_mtbi_s > 0) {
    out += fmt::format("{:<26} {:>14}   (expected {:.0f} in the run)\n", "interrupted every",
                       readable_duration(e.job_mtbi_s), e.expected_interruptions);
  }
  out += fmt::format("{:<26} {:>14}\n", "time to train",
                     std::isfinite(e.wall_time_s) ? readable_duration(e.wall_time_s) : "never");
  out += fmt::format("{:<26} {:>13.1f}%   (training time / time to train)\n", "goodput", 100 * e.goodput);
  if (e.cost_usd) {
    out += fmt::format("{:<26} {:>14}   (at ${} per GPU-hour)\n", "cost",
                       fmt::format("${:.3g}M", *e.cost_usd / 1e6), *c.price_per_gpu_hour_usd);
  }
  if (c.energy) {
    const CampaignEnergy& energy = *c.energy;
    out += fmt::format(
        "{:<26} {:>14}   (IT; {} at the facility, PUE {:.3g}{})\n", "energy", readable_energy(energy.it_j),
        readable_energy(energy.facility_j), energy.facility_j / energy.it_j,
        energy.facility_j == energy.it_j ? ": cluster.facility.pue unset, the IT load alone" : "");
    if (energy.electricity_cost_usd) {
      out += fmt::format("{:<26} {:>14}   (at ${} per kWh)\n", "electricity",
                         fmt::format("${:.3g}M", *energy.electricity_cost_usd / 1e6),
                         *energy.electricity_price_usd_per_kwh);
    }
  }
  for (const std::string& note : e.notes) out += "  note: " + note + "\n";
  return out;
}

}  // namespace trainsim::report
