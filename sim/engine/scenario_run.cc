#include "sim/engine/scenario_run.h"

#include <chrono>

#include "sim/cost/compute_model.h"
#include "sim/engine/ideal_transport.h"
#include "sim/engine/simgrid_transport.h"
#include "sim/workload/builder.h"
#include "sim/workload/gpu_speed.h"
#include "sim/workload/runtime_memory.h"

namespace trainsim::engine {
namespace {

// The ideal tiers of a topology: NVLink/NVSwitch (or PCIe) inside a node, the NICs between nodes.
std::unique_ptr<Transport> ideal_transport(const config::Scenario& scenario) {
  const config::NodeSpec& node = scenario.cluster.topology.node;
  const config::HostLink& host = scenario.cluster.hardware.host_link;
  IdealLinks intra{node.intra.link.bandwidth_bytes_per_s, node.intra.link.latency_s,
                   host.h2d_bandwidth_bytes_per_s, host.latency_s};
  IdealLinks inter = intra;
  if (node.nics.count > 0) {
    // Each GPU's share of the node's NICs.
    inter.bandwidth_bytes_per_s =
        std::min(intra.bandwidth_bytes_per_s, node.nics.link.bandwidth_bytes_per_s *
                                                  static_cast<double>(node.nics.count) /
                                                  static_cast<double>(node.gpus));
    inter.latency_s = node.nics.link.latency_s + scenario.cluster.topology.fabric.link.latency_s;
  }
  return std::make_unique<IdealTransport>(intra, inter, node.gpus);
}

}  // namespace

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
    run->graphs = workload::build_class_graphs(scenario, plan);
    for (const workload::SymmetryClass& c : plan.symmetry_classes()) run->ranks.push_back(c.representative);
  }
  std::vector<const workload::Graph*> graphs;
  for (const workload::Graph& g : run->graphs) graphs.push_back(&g);
  const cost::ComputeModel compute(scenario.cluster.hardware, &run->warnings);
  workload::warn_without_runtime_memory(scenario.cluster.hardware, run->warnings);
  std::unique_ptr<Transport> transport;
  if (options.network == NetworkModel::kIdeal) {
    transport = ideal_transport(scenario);
    run->warnings.add(
        "network-ideal",
        "network model: ideal (contention-free alpha-beta per tier; no congestion, no NIC or PCIe "
        "sharing)");
  } else {
    transport = std::make_unique<SimGridTransport>(scenario.cluster.topology, scenario.cluster.hardware);
    if (!options.engine.full && plan.world_size() > static_cast<int64_t>(run->ranks.size())) {
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
  if (!engine.full && !run->gpu_speed.empty() &&
      plan.world_size() > static_cast<int64_t>(run->ranks.size())) {
    run->warnings.add("stragglers-collapsed",
                      "collapsed run with stragglers: each pipeline stage runs at the speed of its slowest "
                      "GPU (its members move in lockstep); --full simulates every GPU at its own speed");
  }
  run->result = simulate(plan, run->ranks, graphs, *transport, compute, engine);
  run->wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return run;
}

}  // namespace trainsim::engine
