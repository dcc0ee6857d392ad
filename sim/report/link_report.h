// The `links` part of a run report: the load of the network's links (cost/link_load.h) as JSON, read
// back (a cluster's crosses a process boundary), and as a table section.
#ifndef TRAINSIM_SIM_REPORT_LINK_REPORT_H_
#define TRAINSIM_SIM_REPORT_LINK_REPORT_H_

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/cost/link_load.h"

namespace trainsim::report {

// Keys: window_s, directions, loaded_directions, tiers [{tier, directions, loaded, bytes,
// mean_utilization (over the loaded directions), max_utilization, busiest}], busiest [{link, tier,
// bandwidth_bytes_per_s, bytes, busy_s, utilization, busy_fraction, utilization_when_busy, bytes_by_group
// (only with several groups)}]. Utilizations are fractions (1 = the link's full bandwidth).
nlohmann::json to_json(const cost::LinkLoadSummary& summary);
// The summary to_json wrote (a direction without bytes_by_group has none). Throws
// nlohmann::json::exception when a field it always writes is missing.
cost::LinkLoadSummary link_load_from_json(const nlohmann::json& links);

// The table section of a run's link load. `group_names` name the entries of bytes_by_group (the
// jobs of a shared cluster) for a column of each group's share of the traffic.
std::string render_links(const cost::LinkLoadSummary& links,
                         const std::vector<std::string>& group_names = {});

}  // namespace trainsim::report

#endif  // TRAINSIM_SIM_REPORT_LINK_REPORT_H_
