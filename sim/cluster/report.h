// What a cluster run says: per job, its iteration time alone on its nodes and with the other jobs
// running, the slowdown, where the time went in both runs and which collectives slowed down: one
// report, rendered as JSON or as a table.
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
#include "sim/report/breakdown.h"
#include "sim/report/comm_log.h"
#include "sim/report/memory_verdict.h"
#include "sim/report/run_report.h"

namespace trainsim::cluster {

// A collective (kind, group, size) of a job's critical rank whose time over the iteration grew when
// the other jobs ran.
struct SlowedCollective {
  report::CommRecord alone, shared;
  double added_time_s() const { return shared.time_s - alone.time_s; }
};

// A job's iteration as one of its runs found it.
struct JobTiming {
  double iteration_time_s = 0;
  double tokens_per_s = 0;
  double mfu = 0;
  report::Breakdown breakdown;  // the critical rank's, over the last requested iteration
};

struct JobOutcome {
  std::string name;
  std::string scenario;  // its file's name
  int64_t gpus = 0;
  std::vector<int64_t> nodes;
  double start_s = 0;
  JobTiming alone;
  JobTiming shared;  // over the contended iterations (above); mfu scaled from alone's
  size_t shared_iterations = 0;
  double min_iteration_s = 0, max_iteration_s = 0;  // of those iterations
  std::vector<SlowedCollective> slowed;             // the largest growth first, at most three
  report::MemoryVerdict memory;                     // of the shared run
  nlohmann::json alone_report, shared_report;       // the two runs' own reports
  double slowdown() const { return shared.iteration_time_s / alone.iteration_time_s; }
};

struct ClusterReport {
  nlohmann::json provenance;  // engine/provenance.h's, with the inputs and options
  report::ReportContext context;
  std::string cluster;
  std::string topology;
  int64_t nodes = 0;
  int64_t gpus_per_node = 0;
  std::string placement;
  std::vector<int64_t> idle_nodes;
  double window_s = 0;  // when every job had run the requested iterations
  std::vector<JobOutcome> jobs;
  std::vector<std::string> warnings;
  std::optional<cost::LinkLoadSummary> links;  // the run's link load, when it was asked
};

// Builds the report of `runs` (run_cluster's). Never throws for finished runs.
ClusterReport make_cluster_report(const ClusterFile& file, const ClusterRuns& runs,
                                  const report::ReportContext& context);

// The report as JSON: schema_version, provenance, cluster, topology, nodes, gpus_per_node, placement,
// idle_nodes, window_s, warnings, links (when any) and jobs, each with name, scenario, gpus, nodes,
// start_s, alone {iteration_time_s, tokens_per_s, mfu, breakdown}, shared {the same, iterations,
// min_iteration_s, max_iteration_s}, slowdown, slowed_collectives {kind, group, group_size,
// bytes_per_call, calls, alone_ and shared_mean_time_s, alone_ and shared_busbw_bytes_per_s,
// added_time_s}, fits, alone_report, shared_report.
nlohmann::json to_json(const ClusterReport& report);

std::string render_cluster_table(const ClusterReport& report);

// Why some job's plan does not fit ("job X: <report::infeasibility>", one per job); empty when all do.
std::string cluster_infeasibility(const ClusterReport& report);

}  // namespace trainsim::cluster

#endif  // TRAINSIM_SIM_CLUSTER_REPORT_H_
