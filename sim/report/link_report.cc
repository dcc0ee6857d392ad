#include "sim/report/link_report.h"

#include <algorithm>

#include <fmt/format.h>

namespace trainsim::report {

using nlohmann::json;

json link_load_report(const cost::LinkLoadSummary& summary) {
  json tiers = json::array();
  for (const cost::LinkTierLoad& t : summary.tiers) {
    tiers.push_back({{"tier", t.tier},
                     {"directions", t.directions},
                     {"loaded", t.loaded},
                     {"bytes", t.bytes},
                     {"mean_utilization", t.mean_utilization},
                     {"max_utilization", t.max_utilization},
                     {"busiest", t.busiest}});
  }
  json busiest = json::array();
  for (const cost::LinkDirectionLoad& l : summary.busiest) {
    json entry = {{"link", l.name},
                  {"tier", l.tier},
                  {"bandwidth_bytes_per_s", l.bandwidth_bytes_per_s},
                  {"bytes", l.bytes},
                  {"busy_s", l.busy_s},
                  {"utilization", l.utilization},
                  {"busy_fraction", summary.window_s > 0 ? l.busy_s / summary.window_s : 0.0},
                  {"utilization_when_busy", l.utilization_when_busy}};
    if (l.bytes_by_group.size() > 1) entry["bytes_by_group"] = l.bytes_by_group;
    busiest.push_back(std::move(entry));
  }
  return {{"window_s", summary.window_s},
          {"directions", summary.directions},
          {"loaded_directions", summary.loaded},
          {"tiers", tiers},
          {"busiest", busiest}};
}

std::string render_links(const json& links, const std::vector<std::string>& group_names) {
  const auto percent = [](const json& v) { return fmt::format("{:.1f} %", 100 * v.get<double>()); };
  std::string out =
      fmt::format("# link load over {:.6f} s simulated ({} of {} link directions carried traffic)\n",
                  links.at("window_s").get<double>(), links.at("loaded_directions").get<int64_t>(),
                  links.at("directions").get<int64_t>());
  out += fmt::format("  {:<32} {:>7} {:>7} {:>12} {:>9} {:>9}  {}\n", "tier (those that carried traffic)",
                     "dirs", "loaded", "traffic (GB)", "mean util", "max util", "busiest");
  for (const json& t : links.at("tiers")) {
    if (t.at("loaded").get<int64_t>() == 0) continue;
    out += fmt::format("  {:<32} {:>7} {:>7} {:>12.3f} {:>9} {:>9}  {}\n", t.at("tier").get<std::string>(),
                       t.at("directions").get<int64_t>(), t.at("loaded").get<int64_t>(),
                       t.at("bytes").get<double>() / 1e9, percent(t.at("mean_utilization")),
                       percent(t.at("max_utilization")), t.at("busiest").get<std::string>());
  }
  out += "# busiest link directions (util: of the whole window; when busy: while it carried traffic)\n";
  size_t width = 36;  // the link column: wider for names with a cable index
  for (const json& l : links.at("busiest")) width = std::max(width, l.at("link").get<std::string>().size());
  out +=
      fmt::format("  {:<{}} {:<32} {:>8} {:>12} {:>8} {:>8} {:>9}{}\n", "link", width, "tier", "Gb/s",
                  "traffic (GB)", "util", "busy", "when busy", group_names.empty() ? "" : "  share by job");
  for (const json& l : links.at("busiest")) {
    std::string shares;
    if (!group_names.empty() && l.contains("bytes_by_group")) {
      const std::vector<double> by_group = l.at("bytes_by_group").get<std::vector<double>>();
      const double total = l.at("bytes").get<double>();
      for (size_t g = 0; g < by_group.size() && g < group_names.size(); ++g) {
        if (by_group[g] <= 0) continue;
        shares += fmt::format("  {} {:.0f} %", group_names[g], 100 * by_group[g] / total);
      }
    }
    out += fmt::format("  {:<{}} {:<32} {:>8.1f} {:>12.3f} {:>8} {:>8} {:>9}{}\n",
                       l.at("link").get<std::string>(), width, l.at("tier").get<std::string>(),
                       8 * l.at("bandwidth_bytes_per_s").get<double>() / 1e9,
                       l.at("bytes").get<double>() / 1e9, percent(l.at("utilization")),
                       percent(l.at("busy_fraction")), percent(l.at("utilization_when_busy")), shares);
  }
  return out;
}

}  // namespace trainsim::report
