#include "sim/engine/scenario_run.h"

#include <algorithm>
#include <chrono>
#include <numeric>
#include <stdexcept>

#include <fmt/format.h>

#include "sim/cost/compute_model.h"
#include "sim/engine/ideal_engine.h"
#include "sim/engine/simgrid_transport.h"
#include "sim/workload/builder.h"
#include "sim/workload/gpu_speed.h"
#include "sim/workload/runtime_memory.h"
#include "sim/workload/simulated_ranks.h"

namespace trainsim::engine {
namespace {

// A job ready to simulate: its plan, simulated ranks and graphs, GPU speeds and warnings, and the
// cost model its graphs are priced with.
struct Prepared {
  std::unique_ptr<ScenarioRun> run;
  std::unique_ptr<cost::ComputeModel> compute;
  std::vector<double> simulated_speed;  // per simulated rank; empty: all at 1
};

Prepared prepare(const config::Scenario& scenario, const RunOptions& options) {
  Prepared p;
  p.run = std::make_unique<ScenarioRun>(workload::make_plan(scenario));
  ScenarioRun& run = *p.run;
  const workload::ParallelPlan& plan = run.plan;
  if (options.engine.full) {
    run.ranks.resize(static_cast<size_t>(plan.world_size()));
    std::iota(run.ranks.begin(), run.ranks.end(), 0);
    run.graphs = workload::build_class_graphs(scenario, plan);
  } else {
    run.ranks = workload::simulated_ranks(scenario, plan);
    run.graphs = workload::build_rank_graphs(scenario, plan, run.ranks);
  }
  p.compute = std::make_unique<cost::ComputeModel>(scenario.cluster.hardware, &run.warnings);
  workload::warn_without_runtime_memory(scenario.cluster.hardware, run.warnings);
  // Some ranks stand for others; without mirrored traffic, their traffic is missing too.
  const bool collapsed = plan.world_size() > static_cast<int64_t>(run.ranks.size());
  const bool partial_traffic = collapsed && options.engine.mirror == MirrorMode::kNone;
  if (options.network == NetworkModel::kIdeal) {
    run.warnings.add(
        "network-ideal",
        "network model: ideal (contention-free alpha-beta per tier; no congestion, no NIC or PCIe "
        "sharing)");
  } else if (partial_traffic) {
    run.warnings.add(
        "network-collapsed",
        "collapsed run: only the simulated ranks' collectives load the network; traffic of other "
        "groups that would share links (other data- or tensor-parallel groups on the same fabric) "
        "is not injected; --all-traffic plays it, --full simulates it");
  }
  run.gpu_speed = workload::gpu_speeds(scenario, plan);
  p.simulated_speed = workload::simulated_speeds(run.gpu_speed, plan, run.ranks, options.engine.full);
  if (collapsed && !run.gpu_speed.empty()) {
    run.warnings.add("stragglers-collapsed",
                     "collapsed run with stragglers: each pipeline stage runs at the speed of its slowest "
                     "GPU (its members move in lockstep); --full simulates every GPU at its own speed");
  }
  // Routings that put each flow on one cable: where flows collide depends on every rank's flows.
  const config::FabricRouting routing = scenario.cluster.topology.fabric.routing;
  if (routing != config::FabricRouting::kAdaptive) {
    if (options.network == NetworkModel::kIdeal) {
      run.warnings.add(
          "routing-ideal",
          fmt::format("fabric.routing {} has no effect on the ideal network (no links are shared, "
                      "so no flows collide); --network simgrid models the collisions",
                      to_string(routing)));
    } else if (partial_traffic) {
      run.warnings.add(
          "routing-collapsed",
          fmt::format("collapsed run with routing {}: flows collide only with the simulated ranks' "
                      "flows, and the simulated replica's paths stand for every replica's; --all-traffic "
                      "or --full routes every rank's flows",
                      to_string(routing)));
    }
  }
  if (partial_traffic && !scenario.stragglers.slow_nics.empty()) {
    run.warnings.add("slow-nics-collapsed",
                     "collapsed run with slow NICs: the simulated ranks are the replica through the slowest "
                     "node's NICs, and other slow nodes carry only the simulated ranks' traffic; "
                     "--all-traffic or --full routes every rank's");
  }
  return p;
}

// Each cluster GPU's job (its index in `jobs`), for charging link load to jobs; 0 for GPUs no job
// runs on (they send nothing).
std::vector<int> job_of_gpu(const std::vector<Job>& jobs) {
  std::vector<int> out;
  for (size_t j = 0; j < jobs.size(); ++j) {
    for (int64_t r = 0; r < jobs[j].plan->world_size(); ++r) {
      const auto gpu = static_cast<size_t>(jobs[j].gpu_of(r));
      if (out.size() <= gpu) out.resize(gpu + 1, 0);
      out[gpu] = static_cast<int>(j);
    }
  }
  return out;
}

// Why options.busiest_links cannot be honoured for these jobs ("" when it can).
std::string unrecordable_link_load(const std::vector<Prepared>& prepared, const RunOptions& options) {
  if (options.network == NetworkModel::kIdeal) return "the ideal network model has no links";
  if (options.engine.mirror != MirrorMode::kNone) return "";
  for (const Prepared& p : prepared) {
    if (static_cast<int64_t>(p.run->ranks.size()) < p.run->plan.world_size()) {
      return "a collapsed run leaves out the traffic of the ranks it does not simulate; simulate every rank "
             "or play their mirrored traffic";
    }
  }
  return "";
}

}  // namespace

const workload::Graph& ScenarioRun::graph(size_t i) const {
  return graphs[static_cast<size_t>(plan.class_of(ranks[i]))];
}

workload::Renaming ScenarioRun::renaming(size_t i) const { return {plan, graph(i).info.rank, ranks[i]}; }

std::string to_string(NetworkModel network) { return network == NetworkModel::kIdeal ? "ideal" : "simgrid"; }

NetworkModel network_model(const std::string& name) {
  return name == "ideal" ? NetworkModel::kIdeal : NetworkModel::kSimgrid;
}

std::vector<std::unique_ptr<ScenarioRun>> run_jobs(const std::vector<PlacedJob>& jobs,
                                                   const RunOptions& options) {
  const auto started = std::chrono::steady_clock::now();
  std::vector<Prepared> prepared;
  std::vector<std::vector<const workload::Graph*>> graphs(jobs.size());
  std::vector<Job> inputs;
  for (size_t j = 0; j < jobs.size(); ++j) {
    prepared.push_back(prepare(*jobs[j].scenario, options));
    const Prepared& p = prepared.back();
    for (size_t i = 0; i < p.run->ranks.size(); ++i) graphs[j].push_back(&p.run->graph(i));
    inputs.push_back(Job{&p.run->plan, p.run->ranks, graphs[j], p.compute.get(), p.simulated_speed,
                         jobs[j].gpu_of_rank, jobs[j].start_s});
  }
  const config::Scenario& first = *jobs.front().scenario;
  if (options.busiest_links > 0) {
    if (const std::string why = unrecordable_link_load(prepared, options); !why.empty()) {
      throw std::invalid_argument("cannot record link load: " + why);
    }
  }
  // A link load needs every mirror, not only those that can change the simulated ranks' timing.
  const MirrorMode mirror = options.engine.mirror != MirrorMode::kNone && options.busiest_links > 0
                                ? MirrorMode::kAll
                                : options.engine.mirror;
  const JobsOptions limits{options.engine.iterations, options.engine.max_events, options.engine.time_limit_s,
                           mirror, options.engine.progress};
  std::unique_ptr<SimGridTransport> network;
  std::vector<EngineResult> results;
  if (options.network == NetworkModel::kIdeal) {
    results = simulate_jobs(inputs, cost::ideal_tiers(first), limits);
  } else {
    network = std::make_unique<SimGridTransport>(first.cluster.topology, first.cluster.hardware,
                                                 first.stragglers.nic_bandwidth_by_node());
    if (options.busiest_links > 0) network->record_link_load(job_of_gpu(inputs));
    results = simulate_jobs(inputs, *network, limits);
  }
  std::shared_ptr<const cost::LinkLoadSummary> links;
  if (options.busiest_links > 0) {
    double end_s = 0;
    for (const EngineResult& r : results) {
      end_s = std::max({end_s, r.total_time_s, r.iteration_end_s.empty() ? 0.0 : r.iteration_end_s.back()});
    }
    links = std::make_shared<const cost::LinkLoadSummary>(
        network->link_load()->summarize(end_s, options.busiest_links));
  }
  const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::vector<std::unique_ptr<ScenarioRun>> runs;
  for (size_t j = 0; j < jobs.size(); ++j) {
    prepared[j].run->result = std::move(results[j]);
    prepared[j].run->links = links;
    prepared[j].run->wall_s = wall_s;
    runs.push_back(std::move(prepared[j].run));
  }
  return runs;
}

std::unique_ptr<ScenarioRun> run_scenario(const config::Scenario& scenario, const RunOptions& options) {
  std::vector<std::unique_ptr<ScenarioRun>> runs = run_jobs({PlacedJob{&scenario, {}, 0}}, options);
  return std::move(runs.front());
}

}  // namespace trainsim::engine
