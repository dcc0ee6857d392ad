// One simulated run of a scenario, end to end: plan, graphs of the ranks to simulate, the network
// transport, the engine. What `trainsim run` (and later sweeps) call; the report formats the result.
#ifndef TRAINSIM_SIM_ENGINE_SCENARIO_RUN_H_
#define TRAINSIM_SIM_ENGINE_SCENARIO_RUN_H_

#include <memory>
#include <string>
#include <vector>

#include "sim/common/warnings.h"
#include "sim/config/scenario.h"
#include "sim/cost/link_load.h"
#include "sim/engine/engine.h"
#include "sim/workload/graph.h"
#include "sim/workload/plan.h"
#include "sim/workload/renaming.h"

namespace trainsim::engine {

enum class NetworkModel {
  kSimgrid,  // the topology on SimGrid: collectives as algorithms, flows sharing links (default)
  kIdeal,    // contention-free alpha-beta per tier (intra-node links, NICs): fast screening
};

// The command line's spelling of a network model ("simgrid", "ideal"), and back (anything but
// "ideal" is SimGrid; the command line checks the choice).
std::string to_string(NetworkModel network);
NetworkModel network_model(const std::string& name);

struct RunOptions {
  EngineOptions engine;
  NetworkModel network = NetworkModel::kSimgrid;
  // > 0: record the load of every link and keep this many of the busiest directions
  // (ScenarioRun::links). Needs the SimGrid network, and every rank simulated or a collapsed run that
  // plays mirrored traffic (engine.mirror, then every mirror: MirrorMode::kAll).
  size_t busiest_links = 0;
};

struct ScenarioRun {
  explicit ScenarioRun(const workload::ParallelPlan& run_plan) : plan(run_plan) {}

  workload::ParallelPlan plan;
  std::vector<int64_t> ranks;  // simulated, ascending
  // One graph per symmetry class, in class order: in a collapsed run each built for its simulated
  // rank (one per class), in a run of every rank for the class's representative, which the other
  // members run renamed (workload/renaming.h).
  std::vector<workload::Graph> graphs;
  std::vector<double> gpu_speed;  // per rank of the world (workload/gpu_speed.h); empty: all at 1
  EngineResult result;
  // The load of the network's links over the whole simulation, when RunOptions::busiest_links asked
  // for it; one summary shared by every job of a run of several (groups: the jobs, in order).
  std::shared_ptr<const cost::LinkLoadSummary> links;
  WarningLog warnings;
  double wall_s = 0;  // host time spent building and simulating

  // The graph simulated rank `i` (of `ranks`) runs, and how it renames the graph's groups and peers.
  const workload::Graph& graph(size_t i) const;
  workload::Renaming renaming(size_t i) const;
};

// Simulates `scenario`. One call per process (SimGrid). Throws workload::PlanError for plans the
// workload cannot express, DeadlockError and BudgetExceededError.
std::unique_ptr<ScenarioRun> run_scenario(const config::Scenario& scenario, const RunOptions& options);

// One job of a run of several on one cluster: its scenario, where its ranks run, when it starts.
struct PlacedJob {
  const config::Scenario* scenario = nullptr;
  std::vector<int64_t> gpu_of_rank;  // the cluster GPU of each rank of its plan; empty: rank r on GPU r
  double start_s = 0;
};

// Simulates `jobs` together, their traffic sharing the network of the cluster their scenarios name
// (the same topology and hardware profile; the first job's slow NICs apply), as simulate_jobs runs
// them: each runs options.engine.iterations iterations with all the others running, and keeps going
// while another has not. One run per job, in order. One call per process; throws like run_scenario,
// and std::invalid_argument when options.busiest_links is set for a run that cannot record it.
std::vector<std::unique_ptr<ScenarioRun>> run_jobs(const std::vector<PlacedJob>& jobs,
                                                   const RunOptions& options);

}  // namespace trainsim::engine

#endif  // TRAINSIM_SIM_ENGINE_SCENARIO_RUN_H_
