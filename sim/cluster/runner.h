// Running a cluster file: every job alone on its nodes, then all of them together, each simulation
// in a forked child (SimGrid allows one per process).
#ifndef TRAINSIM_SIM_CLUSTER_RUNNER_H_
#define TRAINSIM_SIM_CLUSTER_RUNNER_H_

#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/cluster/cluster_file.h"
#include "sim/engine/scenario_run.h"

namespace trainsim::cluster {

struct ClusterRunOptions {
  // Network model, every rank or one per class, iterations (each job runs at least this many with
  // every other job running; engine::JobsOptions), budgets of each simulation.
  engine::RunOptions run;
  int parallel = 1;          // simulations in flight at once
  std::string command_line;  // for the reports' provenance
  // Where the run of every job together writes its Chrome trace (report/trace.h), truncating what is
  // there; empty: no trace.
  std::filesystem::path trace_path;
  // run.busiest_links applies to the run of every job together only (ClusterRuns::links).
};

// One simulation of a job: its run report (report/run_report.h) and when each of its iterations ended.
struct JobRun {
  nlohmann::json report;
  std::vector<double> iteration_end_s;
};

struct JobRuns {
  JobRun alone;   // the job by itself on its nodes, from time 0
  JobRun shared;  // with every other job of the file running, from its start
};

struct ClusterRuns {
  std::vector<JobRuns> jobs;  // in the file's order
  size_t trace_events = 0;    // written to ClusterRunOptions::trace_path
  // The link load of the run of every job together (report/link_report.h; groups: the jobs in the
  // file's order) when run.busiest_links asked for it.
  std::optional<cost::LinkLoadSummary> links;
};

// A simulation that produced no result: which one, and why.
class ClusterRunError : public std::runtime_error {
 public:
  enum class Kind {
    kPlan,      // a job's plan cannot be simulated (workload::PlanError)
    kBudget,    // stopped by a budget (engine::BudgetExceededError)
    kDeadlock,  // engine::DeadlockError
    kFailed,    // the child crashed or threw something else
  };
  ClusterRunError(Kind kind, const std::string& message) : std::runtime_error(message), kind_(kind) {}
  Kind kind() const { return kind_; }

 private:
  Kind kind_;
};

// Simulates every job of `file` alone and all of them together. Throws ClusterRunError naming the
// simulation that failed (the first in the file's order).
ClusterRuns run_cluster(const ClusterFile& file, const ClusterRunOptions& options);

}  // namespace trainsim::cluster

#endif  // TRAINSIM_SIM_CLUSTER_RUNNER_H_
