// The `campaign` part of a run report: the whole training run (analytic/campaign.h) as JSON and as
// a table section.
#ifndef TRAINSIM_SIM_REPORT_CAMPAIGN_H_
#define TRAINSIM_SIM_REPORT_CAMPAIGN_H_

#include <string>

#include <nlohmann/json.hpp>

#include "sim/analytic/campaign.h"
#include "sim/config/scenario.h"

namespace trainsim::report {

// The campaign `estimate` of `scenario` (campaign.tokens > 0; analytic::estimate_campaign). Keys: tokens,
// iterations, training_s, wall_time_s (absent when the run would not finish), goodput,
// expected_interruptions, job_mtbi_s, checkpoint {bytes, pause_s, write_s, every_iterations,
// interval_s, async, snapshot_host_bytes_per_node} when it checkpoints, cost_usd and price_per_gpu_hour_usd
// when there is a price (the scenario's cluster.cost or the profile's), notes. With `power` (a run report's
// power object; null for none) it adds energy_j (IT energy of the whole run: training, and re-done work,
// at the iteration's mean power, checkpoint pauses and restarts with every GPU idle),
// facility_energy_j (times the PUE) and, with the scenario's cluster.facility.electricity_price,
// electricity_cost_usd.
nlohmann::json campaign_report(const config::Scenario& scenario, const analytic::CampaignEstimate& estimate,
                               const nlohmann::json& power = nullptr);

// The table section of a report's `campaign` object.
std::string render_campaign(const nlohmann::json& campaign);

}  // namespace trainsim::report

#endif  // TRAINSIM_SIM_REPORT_CAMPAIGN_H_
