#include "sim/report/campaign.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "sim/config/units.h"

namespace trainsim::report {

using nlohmann::json;

json campaign_report(const config::Scenario& scenario, const analytic::CampaignEstimate& e,
                     const json& power) {
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
                         {"async", scenario.campaign.checkpoints->async},
                         {"snapshot_host_bytes_per_node", e.snapshot_host_bytes_per_node}};
  }
  if (e.cost_usd) {
    out["cost_usd"] = *e.cost_usd;
    out["price_per_gpu_hour_usd"] = *scenario.cluster.hardware.cost.price_per_gpu_hour_usd;
  }
  if (!power.is_null() && std::isfinite(e.wall_time_s)) {
    // Training stops for the checkpoints the useful work writes and for each restart; the rest of
    // the wall time (useful and re-done iterations) draws the iteration's mean.
    double stopped_s = 0;
    if (e.checkpoint_interval_s > 0)
      stopped_s += e.training_s / e.checkpoint_interval_s * e.checkpoint_pause_s;
    if (const auto& i = scenario.campaign.interruptions) stopped_s += e.expected_interruptions * i->restart_s;
    stopped_s = std::clamp(stopped_s, 0.0, e.wall_time_s - e.training_s);
    const double energy_j = power.at("it_mean_w").get<double>() * (e.wall_time_s - stopped_s) +
                            power.at("it_idle_w").get<double>() * stopped_s;
    const config::Facility& facility = scenario.cluster.facility;
    out["energy_j"] = energy_j;
    out["facility_energy_j"] = energy_j * facility.pue;
    if (facility.electricity_usd_per_kwh) {
      out["electricity_price_usd_per_kwh"] = *facility.electricity_usd_per_kwh;
      out["electricity_cost_usd"] = energy_j * facility.pue / 3.6e6 * *facility.electricity_usd_per_kwh;
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

std::string render_campaign(const json& c) {
  std::string out = "\n# campaign\n";
  out += fmt::format("{:<26} {:>14}   ({} iterations)\n", "tokens",
                     config::format_token_total(c.at("tokens").get<double>()),
                     c.at("iterations").get<int64_t>());
  out += fmt::format("{:<26} {:>14}   (iterations only)\n", "training time",
                     readable_duration(c.at("training_s").get<double>()));
  if (c.contains("checkpoint")) {
    const json& k = c.at("checkpoint");
    out += fmt::format(
        "{:<26} {:>14}   every {} iteration{} ({}); training pauses {} each{}\n", "checkpoint",
        config::format_bytes_rounded(k.at("bytes").get<double>()), k.at("every_iterations").get<int64_t>(),
        k.at("every_iterations").get<int64_t>() == 1 ? "" : "s",
        readable_duration(k.at("interval_s").get<double>()), readable_duration(k.at("pause_s").get<double>()),
        k.at("async").get<bool>()
            ? fmt::format(", the write takes {} behind", readable_duration(k.at("write_s").get<double>()))
            : "");
  }
  if (c.at("job_mtbi_s").get<double>() > 0) {
    out += fmt::format("{:<26} {:>14}   (expected {:.0f} in the run)\n", "interrupted every",
                       readable_duration(c.at("job_mtbi_s").get<double>()),
                       c.at("expected_interruptions").get<double>());
  }
  out +=
      fmt::format("{:<26} {:>14}\n", "time to train",
                  c.contains("wall_time_s") ? readable_duration(c.at("wall_time_s").get<double>()) : "never");
  out += fmt::format("{:<26} {:>13.1f}%   (training time / time to train)\n", "goodput",
                     100 * c.at("goodput").get<double>());
  if (c.contains("cost_usd")) {
    out += fmt::format("{:<26} {:>14}   (at ${} per GPU-hour)\n", "cost",
                       fmt::format("${:.3g}M", c.at("cost_usd").get<double>() / 1e6),
                       c.at("price_per_gpu_hour_usd").get<double>());
  }
  if (c.contains("energy_j")) {
    const double it_j = c.at("energy_j").get<double>();
    const double facility_j = c.at("facility_energy_j").get<double>();
    out += fmt::format("{:<26} {:>14}   (IT; {} at the facility, PUE {:.3g}{})\n", "energy",
                       readable_energy(it_j), readable_energy(facility_j), facility_j / it_j,
                       facility_j == it_j ? ": cluster.facility.pue unset, the IT load alone" : "");
    if (c.contains("electricity_cost_usd")) {
      out += fmt::format("{:<26} {:>14}   (at ${} per kWh)\n", "electricity",
                         fmt::format("${:.3g}M", c.at("electricity_cost_usd").get<double>() / 1e6),
                         c.at("electricity_price_usd_per_kwh").get<double>());
    }
  }
  for (const json& note : c.at("notes")) out += "  note: " + note.get<std::string>() + "\n";
  return out;
}

}  // namespace trainsim::report
