// What a cluster run says: per job, its iteration time alone on its nodes and with the other jobs
// running, the slowdown, where the time went in both runs and which collectives slowed down. One JSON
// object, from which the table is rendered.
//
// A job's shared iteration time is the mean of its iterations that ran entirely while every other
// job was running: those that began once the last job had started and ended by the time every job
// had run the requested iterations (the window), leaving out its first (it starts in step with the
// others, which real jobs do not). Without such an iteration (a job that ends its requested ones
// before a late one starts) it is its last requested iteration, and a warning says so. Its alone
// time is that of its last requested iteration by itself. Breakdowns and communication logs are the
// critical rank's over the last requested iteration of each run.
#ifndef TRAINSIM_SIM_CLUSTER_REPORT_H_
#define TRAINSIM_SIM_CLUSTER_REPORT_H_

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/cluster/cluster_file.h"
#include "sim/cluster/runner.h"
#include "sim/report/run_report.h"

namespace trainsim::cluster {

// Builds the report of `runs` (run_cluster's), with their link load as `links` when they have one.
// Never throws for finished runs.
nlohmann::json make_cluster_report(const ClusterFile& file, const ClusterRuns& runs,
                                   const report::ReportContext& context);

std::string render_cluster_table(const nlohmann::json& report);

// Why some job's plan does not fit ("job X: <report::infeasibility>", one per job); empty when all do.
std::string cluster_infeasibility(const nlohmann::json& report);

}  // namespace trainsim::cluster

#endif  // TRAINSIM_SIM_CLUSTER_REPORT_H_
