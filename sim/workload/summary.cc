#include "sim/workload/summary.h"

#include "sim/workload/errors.h"
#include "sim/workload/layout.h"
#include "sim/workload/shapes.h"

namespace trainsim::workload {

WorkloadSummary summarize(const config::Scenario& scenario, const ParallelPlan& plan,
                          const std::vector<Graph>& class_graphs) {
  const RankShapes shapes = derive_shapes(scenario, plan);
  const StageLayout layout = partition_layers(shapes);
  const std::vector<SymmetryClass> classes = plan.symmetry_classes();
  TRAINSIM_WORKLOAD_CHECK(classes.size() == class_graphs.size())
      << class_graphs.size() << " graphs for " << classes.size() << " classes";
  WorkloadSummary w;
  w.parameters = model_params(shapes, layout);
  w.gpus_per_node = scenario.cluster.topology.node.gpus;
  std::vector<double> host_peaks;
  for (size_t c = 0; c < classes.size(); ++c) {
    const Graph& g = class_graphs[c];
    ClassSummary cs;
    cs.cls = classes[c];
    cs.ops = g.size();
    cs.edges = g.edge_count();
    cs.params_per_rank = stage_params(shapes, layout, classes[c].stage);
    cs.flops = flop_totals(g);
    cs.memory = memory_timeline(g);
    cs.communicators = communicator_use(g, plan, w.gpus_per_node);
    cs.comm = comm_log(plan, g);
    const double n = static_cast<double>(classes[c].size);
    w.iteration.executed += n * cs.flops.executed;
    w.iteration.model += n * cs.flops.model;
    w.iteration.hardware += n * cs.flops.hardware;
    host_peaks.push_back(cs.memory.peak_host_bytes);
    w.classes.push_back(std::move(cs));
  }
  w.peak_host_bytes_per_node = peak_host_bytes_per_node(plan, host_peaks, w.gpus_per_node);
  return w;
}

}  // namespace trainsim::workload
