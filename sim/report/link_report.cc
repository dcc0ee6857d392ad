#include "sim/report/link_report.h"

#include <algorithm>

#include <fmt/format.h>

namespace trainsim::report {

using nlohmann::json;

namespace {

double busy_fraction(const cost::LinkLoadSummary& summary, const cost::LinkDirectionLoad& l) {
  return summary.window_s > 0 ? l.busy_s / summary.window_s : 0.0;
}

}  // namespace

json to_json(const cost::LinkLoadSummary& summary) {
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
                  {"busy_fraction", busy_fraction(summary, l)},
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

cost::LinkLoadSummary link_load_from_json(const json& links) {
  cost::LinkLoadSummary out;
  out.window_s = links.at("window_s").get<double>();
  out.directions = links.at("directions").get<int>();
  out.loaded = links.at("loaded_directions").get<int>();
  for (const json& t : links.at("tiers")) {
    out.tiers.push_back({t.at("tier").get<std::string>(), t.at("directions").get<int>(),
                         t.at("loaded").get<int>(), t.at("bytes").get<double>(),
                         t.at("mean_utilization").get<double>(), t.at("max_utilization").get<double>(),
                         t.at("busiest").get<std::string>()});
  }
  for (const json& l : links.at("busiest")) {
    out.busiest.push_back({l.at("link").get<std::string>(), l.at("tier").get<std::string>(),
                           l.at("bandwidth_bytes_per_s").get<double>(), l.at("bytes").get<double>(),
                           l.at("busy_s").get<double>(), l.at("utilization").get<double>(),
                           l.at("utilization_when_busy").get<double>(),
                           l.value("bytes_by_group", std::vector<double>())});
  }
  return out;
}

std::string render_links(const cost::LinkLoadSummary& links, const std::vector<std::string>& group_names) {
  const auto percent = [](double v) { return fmt::format("{:.1f} %", 100 * v); };
  std::string out =
      fmt::format("# link load over {:.6f} s simulated ({} of {} link directions carried traffic)\n",
                  links.window_s, links.loaded, links.directions);
  out += fmt::format("  {:<32} {:>7} {:>7} {:>12} {:>9} {:>9}  {}\n", "tier (those that carried traffic)",
                     "dirs", "loaded", "traffic (GB)", "mean util", "max util", "busiest");
  for (const cost::LinkTierLoad& t : links.tiers) {
    if (t.loaded == 0) continue;
    out += fmt::format("  {:<32} {:>7} {:>7} {:>12.3f} {:>9} {:>9}  {}\n", t.tier, t.directions, t.loaded,
                       t.bytes / 1e9, percent(t.mean_utilization), percent(t.max_utilization), t.busiest);
  }
  out += "# busiest link directions (util: of the whole window; when busy: while it carried traffic)\n";
  size_t width = 36;  // the link column: wider for names with a cable index
  for (const cost::LinkDirectionLoad& l : links.busiest) width = std::max(width, l.name.size());
  out +=
      fmt::format("  {:<{}} {:<32} {:>8} {:>12} {:>8} {:>8} {:>9}{}\n", "link", width, "tier", "Gb/s",
                  "traffic (GB)", "util", "busy", "when busy", group_names.empty() ? "" : "  share by job");
  for (const cost::LinkDirectionLoad& l : links.busiest) {
    std::string shares;
    if (!group_names.empty() && l.bytes_by_group.size() > 1) {
      for (size_t g = 0; g < l.bytes_by_group.size() && g < group_names.size(); ++g) {
        if (l.bytes_by_group[g] <= 0) continue;
        shares += fmt::format("  {} {:.0f} %", group_names[g], 100 * l.bytes_by_group[g] / l.bytes);
      }
    }
    out += fmt::format("  {:<{}} {:<32} {:>8.1f} {:>12.3f} {:>8} {:>8} {:>9}{}\n", l.name, width, l.tier,
                       8 * l.bandwidth_bytes_per_s / 1e9, l.bytes / 1e9, percent(l.utilization),
                       percent(busy_fraction(links, l)), percent(l.utilization_when_busy), shares);
  }
  return out;
}

}  // namespace trainsim::report
