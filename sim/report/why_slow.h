// Why a plan is as slow as it is, from the critical rank's simulated iteration: which collectives
// held its compute stream up and for how long, how far each class of its kernels ran from its
// roofline, how its pipeline bubble compares with the schedule's ideal and what widened it, and how
// much memory it leaves free. `trainsim run` adds the changes of plan the closed-form estimate predicts
// would help most (search/advice.h) and prints it all as the "why" section.
#ifndef TRAINSIM_SIM_REPORT_WHY_SLOW_H_
#define TRAINSIM_SIM_REPORT_WHY_SLOW_H_

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/config/scenario.h"
#include "sim/engine/engine.h"
#include "sim/report/breakdown.h"
#include "sim/workload/graph.h"

namespace trainsim::report {

// The section's JSON: "exposed_comm" (per collective kind and group, seconds and fraction of the
// iteration, longest first), "kernels" (per op label: busy seconds, FLOPs, bytes, the roofline's
// seconds at the dtype's dense peak and the HBM bandwidth, and its efficiency = roofline / busy,
// longest first), "bubble" (simulated seconds and fraction, the schedule's ideal fraction, the spread of
// the stages' compute) and "memory" (HBM left free under the usable limit). `critical_graph` and
// `critical_run` are the critical rank's, over [start_s, end_s]; `stages` the pipeline stages' breakdowns
// (empty without a pipeline); `bubble_ideal` the closed form's (p - 1) / (m v).
nlohmann::json why_slow(const config::Scenario& scenario, const workload::Graph& critical_graph,
                        const engine::RankRun& critical_run, double start_s, double end_s,
                        const Breakdown& breakdown, const std::vector<StageBreakdown>& stages,
                        double bubble_ideal, double peak_hbm_bytes);

// The "why" section of the run table (with the report's "changes" when present).
std::string render_why_slow(const nlohmann::json& why, double iteration_s);

}  // namespace trainsim::report

#endif  // TRAINSIM_SIM_REPORT_WHY_SLOW_H_
