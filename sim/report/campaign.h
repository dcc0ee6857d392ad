// The `campaign` part of a run report: the whole training run (analytic/campaign.h) as JSON and as
// a table section.
#ifndef TRAINSIM_SIM_REPORT_CAMPAIGN_H_
#define TRAINSIM_SIM_REPORT_CAMPAIGN_H_

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "sim/analytic/campaign.h"
#include "sim/config/scenario.h"
#include "sim/report/power.h"

namespace trainsim::report {

// The energy of a whole campaign: training and re-done work at the iteration's mean IT power,
// checkpoint pauses and restarts with every GPU idle.
struct CampaignEnergy {
  double it_j = 0;
  double facility_j = 0;  // times the PUE
  // With the scenario's cluster.facility.electricity_price: the price and the facility's energy at it.
  std::optional<double> electricity_price_usd_per_kwh;
  std::optional<double> electricity_cost_usd;
};

// A training campaign as a report states it.
struct CampaignReport {
  analytic::CampaignEstimate estimate;
  bool async_checkpoints = false;                // when it checkpoints
  std::optional<double> price_per_gpu_hour_usd;  // the price estimate.cost_usd is at, when there is one
  std::optional<CampaignEnergy> energy;          // with a power model, when the campaign completes
};

// The campaign `estimate` of `scenario` (campaign.tokens > 0; analytic::estimate_campaign), with its
// energy when `power` (the run's; null for none) gives the IT power.
CampaignReport campaign_report(const config::Scenario& scenario, const analytic::CampaignEstimate& estimate,
                               const PowerReport* power = nullptr);

// Keys: tokens, iterations, training_s, wall_time_s (absent when the run would not finish), goodput,
// expected_interruptions, job_mtbi_s, checkpoint {bytes, pause_s, write_s, every_iterations,
// interval_s, async, snapshot_host_bytes_per_node} when it checkpoints, cost_usd and
// price_per_gpu_hour_usd when there is a price (the scenario's cluster.cost or the profile's), notes,
// and with the energy energy_j, facility_energy_j, and electricity_price_usd_per_kwh and
// electricity_cost_usd when priced.
nlohmann::json to_json(const CampaignReport& campaign);

// The table section of a campaign.
std::string render_campaign(const CampaignReport& campaign);

}  // namespace trainsim::report

#endif  // TRAINSIM_SIM_REPORT_CAMPAIGN_H_
