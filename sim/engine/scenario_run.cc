#include "sim/engine/scenario_run.h"

#include <chrono>

#include "sim/cost/compute_model.h"
#include "sim/engine/ideal_transport.h"
#include "sim/engine/simgrid_transport.h"
#include "sim/workload/builder.h"
#include "sim/workload/gpu_speed.h"
#include "sim/workload/runtime_memory.h"
#include "sim/workload/simulated_ranks.h"

namespace trainsim::engine {
std::unique_ptr<ScenarioRun> run_scenario(const config::Scenario& scenario, const RunOptions& options) {
  const auto started = std::chrono::steady_clock::now();
  auto run = std::make_unique<ScenarioRun>(ScenarioRun{workload::make_plan(scenario), {}, {}, {}, {}, {}, 0});
  const workload::ParallelPlan& plan = run->plan;
  if (options.engine.full) {
    for (int64_t r = 0; r < plan.world_size(); ++r) {
      run->ranks.push_back(r);
      run->graphs.push_back(workload::build_rank_graph(scenario, plan, r));
    }
  } else {
    run->ranks = workload::simulated_ranks(scenario, plan);
    run->graphs = workload::build_rank_graphs(scenario, plan, run->ranks);
  }
  std::vector<const workload::Graph*> graphs;
  for (const workload::Graph& g : run->graphs) graphs.push_back(&g);
  const cost::ComputeModel compute(scenario.cluster.hardware, &run->warnings);
  workload::warn_without_runtime_memory(scenario.cluster.hardware, run->warnings);
  // Some ranks stand for others.
  const bool collapsed = plan.world_size() > static_cast<int64_t>(run->ranks.size());
  std::unique_ptr<Transport> transport;
  if (options.network == NetworkModel::kIdeal) {
    transport = std::make_unique<IdealTransport>(ideal_tiers(scenario));
    run->warnings.add(
        "network-ideal",
        "network model: ideal (contention-free alpha-beta per tier; no congestion, no NIC or PCIe "
        "sharing)");
  } else {
    transport = std::make_unique<SimGridTransport>(scenario.cluster.topology, scenario.cluster.hardware,
                                                   scenario.stragglers.nic_bandwidth_by_node());
    if (collapsed) {
      run->warnings.add(
          "network-collapsed",
          "collapsed run: only the simulated ranks' collectives load the network; traffic of other "
          "groups that would share links (other data- or tensor-parallel groups on the same fabric) "
          "is not injected; --full simulates it");
    }
  }
  EngineOptions engine = options.engine;
  run->gpu_speed = workload::gpu_speeds(scenario, plan);
  engine.compute_speed = workload::simulated_speeds(run->gpu_speed, plan, run->ranks, engine.full);
  if (collapsed && !run->gpu_speed.empty()) {
    run->warnings.add("stragglers-collapsed",
                      "collapsed run with stragglers: each pipeline stage runs at the speed of its slowest "
                      "GPU (its members move in lockstep); --full simulates every GPU at its own speed");
  }
  if (collapsed && !scenario.stragglers.slow_nics.empty()) {
    run->warnings.add("slow-nics-collapsed",
                      "collapsed run with slow NICs: the simulated ranks are the replica through the slowest "
                      "node's NICs, and other slow nodes carry only the simulated ranks' traffic; --full "
                      "routes every rank's");
  }
  run->result = simulate(plan, run->ranks, graphs, *transport, compute, engine);
  run->wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return run;
}

}  // namespace trainsim::engine
