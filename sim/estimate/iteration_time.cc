#include "sim/estimate/iteration_time.h"

#include <algorithm>
#include <array>
#include <limits>
#include <map>
#include <optional>
#include <queue>
#include <set>
#include <tuple>
#include <utility>
#include <vector>

#include "sim/analytic/bubble.h"
#include "sim/analytic/flops.h"
#include "sim/cost/compute_model.h"
#include "sim/cost/ideal_transfers.h"
#include "sim/cost/op_cost.h"
#include "sim/cost/rank_schedule.h"
#include "sim/engine/engine.h"
#include "sim/report/breakdown.h"
#include "sim/workload/builder.h"
#include "sim/workload/gpu_speed.h"
#include "sim/workload/layout.h"
#include "sim/workload/memory.h"
#include "sim/workload/pipeline_schedule.h"
#include "sim/workload/plan.h"
#include "sim/workload/runtime_memory.h"
#include "sim/workload/shapes.h"
#include "sim/workload/simulated_ranks.h"

namespace trainsim::estimate {
namespace {

using workload::Op;
using workload::OpKind;

constexpr double kInfinity = std::numeric_limits<double>::infinity();

// One rank's iteration without waiting for other pipeline stages: every op starts when its
// predecessors have finished (the graph encodes stream order too) and lasts its kernel time, its
// alpha-beta communication time or its copy time; peers are taken to be ready together with it, as
// the collapsed simulation takes them. Split the way the run report splits the simulation.
struct StageTime {
  double iteration_s = 0;
  report::Breakdown breakdown;  // bubble_s: waiting for other stages (the fill and drain come later)
  double executed_flops = 0;
  double peak_hbm_bytes = 0;
  double peak_host_bytes = 0;
  analytic::PassShares shares;  // of the kernel time of forward and backward passes

  // The member-wise affine extrapolation from (ma, *this) and (mb, b) to m micro-batches; memory
  // peaks are taken from `b`.
  StageTime extrapolate(int64_t ma, const StageTime& b, int64_t mb, int64_t m) const;
};

// a + (b - a) x f
double affine(double a, double b, double f) { return a + (b - a) * f; }

StageTime StageTime::extrapolate(int64_t ma, const StageTime& b, int64_t mb, int64_t m) const {
  const double f = static_cast<double>(m - ma) / static_cast<double>(mb - ma);
  StageTime r = b;
  r.iteration_s = affine(iteration_s, b.iteration_s, f);
  r.executed_flops = affine(executed_flops, b.executed_flops, f);
  for (const report::BreakdownPart& part : report::kBreakdownParts) {
    r.breakdown.*part.seconds = affine(breakdown.*part.seconds, b.breakdown.*part.seconds, f);
  }
  r.breakdown.outside_layers_s = affine(breakdown.outside_layers_s, b.breakdown.outside_layers_s, f);
  return r;
}

class StageTimer {
 public:
  StageTimer(const config::Scenario& scenario, const workload::ParallelPlan& plan,
             const cost::ComputeModel& compute, EstimateDetail detail)
      : compute_(compute), transfers_(scenario, plan), detail_(detail) {}

  // `graph` laid out on a GPU whose kernels run at `speed` times the profile's rates.
  StageTime time(const workload::Graph& graph, double speed) {
    std::vector<double> duration = cost::compute_durations(graph, compute_, speed);
    engine::RankRun run;
    run.start_s.assign(graph.size(), 0.0);
    run.end_s.assign(graph.size(), 0.0);
    run.launch_s.assign(graph.size(), 0.0);
    double finish_s = 0;
    // With two lanes (overlapped pairs) kernels take turns on the GPU, as in the engine.
    const bool lanes = cost::has_two_lanes(graph);
    double gpu_free_s = 0;
    // Collectives so far, per stream (in start order): kernels that start while one runs are slowed
    // like the engine slows them.
    std::array<std::vector<std::pair<double, double>>, workload::kStreamCount> collectives;
    // Ops in the order they start; at one instant kernels last, so that a kernel issued together with
    // a collective overlaps it whatever their ids, as in the engines (cost::CollectivesInFlight).
    // Kernels waiting for the GPU of two lanes take it in the order they became ready (ready_s).
    using Ready = std::tuple<double, bool, double, workload::OpId>;  // start, is a kernel, ready_s, id
    std::priority_queue<Ready, std::vector<Ready>, std::greater<>> ready;
    std::vector<size_t> waiting(graph.size());
    for (workload::OpId id = 0; id < graph.size(); ++id) {
      waiting[id] = graph.predecessors(id).size();
      if (waiting[id] == 0) ready.emplace(0.0, workload::is_kernel(graph.op(id).kind), 0.0, id);
    }
    const workload::Graph::Successors successors = graph.successors();
    // The host issuing the ops, as the engine models it when the stack gives a dispatch time; ops
    // ready while it waits at a synchronisation are parked until that ends.
    std::optional<cost::HostDispatch> host;
    if (compute_.host_dispatch_s() > 0) host.emplace(graph, compute_.host_dispatch_s());
    if (host) host->begin_iteration(0);
    std::vector<workload::OpId> parked;
    while (!ready.empty()) {
      const auto [start, kernel, ready_s, id] = ready.top();
      ready.pop();
      if (host) {
        const std::optional<double> issued = host->issue_s(id);
        if (!issued) {
          parked.push_back(id);
          continue;
        }
        if (*issued > start) {
          run.start_s[id] = *issued;
          ready.emplace(*issued, kernel, ready_s, id);
          continue;
        }
      }
      if (kernel && lanes && start < gpu_free_s) {
        ready.emplace(gpu_free_s, true, ready_s, id);
        continue;
      }
      const Op& op = graph.op(id);
      double d = duration[id] + transfers_.op_s(op, graph.info.rank);
      if (kernel) d = cost::kernel_time_s(d, collective_running(collectives, start), compute_);
      run.launch_s[id] = start;
      run.end_s[id] = start + d;
      if (kernel) gpu_free_s = run.end_s[id];
      if (op.kind == OpKind::kCollective) {
        collectives[static_cast<size_t>(op.stream)].emplace_back(start, run.end_s[id]);
      }
      finish_s = std::max(finish_s, run.end_s[id]);
      if (host && op.kind == OpKind::kHostSync) {
        host->finished(id, run.end_s[id]);
        for (const workload::OpId p : parked) {
          ready.emplace(run.start_s[p], workload::is_kernel(graph.op(p).kind), run.start_s[p], p);
        }
        parked.clear();
      }
      for (const workload::OpId next : successors.of(id)) {
        run.start_s[next] = std::max(run.start_s[next], run.end_s[id]);
        if (--waiting[next] == 0) {
          ready.emplace(run.start_s[next], workload::is_kernel(graph.op(next).kind), run.start_s[next], next);
        }
      }
    }
    StageTime t;
    t.iteration_s = finish_s;
    if (detail_ == EstimateDetail::kFull) {
      t.breakdown = report::attribute_time(graph, run, 0, finish_s);
      t.breakdown.exposed_comm_by_collective_s.clear();
      t.executed_flops = workload::flop_totals(graph).executed;
    }
    double passes_s = 0;  // kernels of the forward and backward passes
    double forward_s = 0;
    double weight_grad_s = 0;
    for (workload::OpId id = 0; id < graph.size(); ++id) {
      const Op& op = graph.op(id);
      if (!workload::is_kernel(op.kind) || op.phase == workload::Phase::kSetup ||
          op.phase == workload::Phase::kOptimizer) {
        continue;
      }
      passes_s += duration[id];
      if (op.phase == workload::Phase::kForward) forward_s += duration[id];
      if (op.kind == OpKind::kGemm && op.gemm.pass == workload::GemmPass::kWeightGrad) {
        weight_grad_s += duration[id];
      }
    }
    if (passes_s > 0) t.shares = {forward_s / passes_s, weight_grad_s / passes_s};
    // Memory as the engine counts it: each allocation and free when its op runs.
    std::vector<workload::OpId> buffer_ops;
    for (workload::OpId id = 0; id < graph.size(); ++id) {
      const OpKind kind = graph.op(id).kind;
      if (kind == OpKind::kAlloc || kind == OpKind::kFree) buffer_ops.push_back(id);
    }
    std::stable_sort(buffer_ops.begin(), buffer_ops.end(),
                     [&run](workload::OpId x, workload::OpId y) { return run.start_s[x] < run.start_s[y]; });
    cost::MemoryTracker memory;
    for (const workload::OpId id : buffer_ops) memory.apply(graph.op(id), run.start_s[id]);
    t.peak_hbm_bytes = memory.peak_hbm_bytes();
    t.peak_host_bytes = memory.peak_host_bytes();
    return t;
  }

 private:
  // Whether a collective of `intervals` (per stream, in start order) runs at time `t`.
  static bool collective_running(
      const std::array<std::vector<std::pair<double, double>>, workload::kStreamCount>& intervals, double t) {
    for (const auto& stream : intervals) {
      const auto after = std::upper_bound(stream.begin(), stream.end(), std::make_pair(t, kInfinity));
      if (after != stream.begin() && std::prev(after)->second > t) return true;
    }
    return false;
  }

  const cost::ComputeModel& compute_;
  cost::IdealTransfers transfers_;
  EstimateDetail detail_;
};

// The rank graphs a closed form lays out: one per pipeline stage, of the rank a collapsed run simulates
// for it, at any micro-batch count, and the speed of each stage's slowest GPU (as a collapsed run
// simulates it).
class StageGraphs {
 public:
  StageGraphs(const config::Scenario& scenario, const workload::ParallelPlan& plan,
              const workload::RankShapes& shapes)
      : scenario_(scenario),
        plan_(plan),
        dp_(shapes.dp),
        representatives_(workload::simulated_ranks(scenario, plan)),
        speeds_(
            workload::simulated_speeds(workload::gpu_speeds(scenario, plan), plan, representatives_, false)) {
    if (speeds_.empty()) speeds_.assign(static_cast<size_t>(shapes.pp), 1.0);
  }

  // The graph of `stage`'s rank with `micro_batches` micro-batches per replica.
  workload::Graph graph(int64_t stage, int64_t micro_batches) const {
    config::Scenario reduced = scenario_;
    reduced.training.global_batch = micro_batches * scenario_.training.micro_batch * dp_;
    return workload::build_rank_graph(reduced, plan_, representatives_[static_cast<size_t>(stage)]);
  }
  double speed(int64_t stage) const { return speeds_[static_cast<size_t>(stage)]; }
  const std::vector<double>& speeds() const { return speeds_; }

 private:
  const config::Scenario& scenario_;
  const workload::ParallelPlan& plan_;
  int64_t dp_;
  std::vector<int64_t> representatives_;
  std::vector<double> speeds_;
};

// The stages worth building: the first (embedding, most micro-batches in flight), the last (LM
// head, loss), the first stage with the most layers and the first with the slowest GPU
// (`stage_speed`); others repeat one of these.
std::vector<int64_t> stages_to_build(const workload::RankShapes& shapes,
                                     const std::vector<double>& stage_speed) {
  const workload::StageLayout layout = workload::partition_layers(shapes);
  int64_t widest = 0, widest_layers = -1;
  for (int64_t stage = 0; stage < shapes.pp; ++stage) {
    int64_t layers = 0;
    for (int64_t chunk = 0; chunk < shapes.vpp; ++chunk) {
      layers += layout.layer_count[layout.virtual_stage(stage, chunk)];
    }
    if (layers > widest_layers) {
      widest_layers = layers;
      widest = stage;
    }
  }
  const auto slowest = std::min_element(stage_speed.begin(), stage_speed.end()) - stage_speed.begin();
  const std::set<int64_t> stages{0, widest, shapes.pp - 1, slowest};
  return {stages.begin(), stages.end()};
}

// Model and hardware FLOPs per iteration by the run report's convention (the graphs' model_flops
// summed over every rank): the closed forms with the LM head over ceil(V/t)·t vocabulary rows, as
// the graphs split the vocabulary.
std::pair<double, double> report_flops(const config::Scenario& scenario) {
  const analytic::IterationFlops flops = analytic::iteration_flops(scenario);
  const int64_t tp = scenario.parallelism.tp;
  const int64_t vocab = scenario.model.vocab;
  const double padding = static_cast<double>((vocab + tp - 1) / tp * tp) / static_cast<double>(vocab) - 1;
  const double model = flops.model + 3 * flops.forward_logits * padding;
  double recomputed = flops.hardware - flops.model;
  // FPDT's loss recomputes the logits (see iteration_flops).
  if (config::sequence_scheme(scenario.parallelism.sequence_parallel).chunked) {
    recomputed += flops.forward_logits * padding;
  }
  return {model, model + recomputed};
}

}  // namespace

IterationTimeEstimate estimate_iteration_time(const config::Scenario& scenario, WarningLog* warnings,
                                              EstimateDetail detail) {
  const workload::ParallelPlan plan = workload::make_plan(scenario);
  const workload::RankShapes shapes = workload::derive_shapes(scenario, plan);
  const config::Schedule schedule = scenario.parallelism.schedule;
  const int64_t m = shapes.micro_batches;
  const int64_t pp = shapes.pp;

  // Graphs of a few micro-batches stand for all m: every sum is affine in the micro-batch count from
  // the schedule's steady state on (workload::steady_state_counts), so two counts extrapolate exactly.
  const workload::SteadyStateCounts steady =
      workload::steady_state_counts(schedule, pp, shapes.vpp, scenario.parallelism.ep_comm_overlap);
  const int64_t step = steady.more - steady.fewer;
  const int64_t mb = std::min(m, steady.more);
  const int64_t ma = mb - step;

  const cost::ComputeModel compute(scenario.cluster.hardware, warnings);
  workload::warn_without_runtime_memory(scenario.cluster.hardware, *warnings);
  StageTimer timer(scenario, plan, compute, detail);
  const StageGraphs stages(scenario, plan, shapes);
  const std::vector<double>& stage_speed = stages.speeds();
  const auto time = [&](int64_t micro_batches, int64_t stage) {
    return timer.time(stages.graph(stage, micro_batches), stages.speed(stage));
  };

  const double md = static_cast<double>(m);
  std::vector<StageTime> times;
  std::vector<double> per_micro_batch_s;  // what one more micro-batch adds to each stage
  const std::vector<int64_t> built = stages_to_build(shapes, stage_speed);
  for (const int64_t stage : built) {
    const StageTime at_b = time(mb, stage);
    if (pp == 1 && mb == m) {  // one stage has no fill and drain for a per-micro-batch pace to size
      times.push_back(at_b);
      per_micro_batch_s.push_back(0);
    } else if (ma >= config::min_micro_batches(schedule, pp)) {
      const StageTime at_a = time(ma, stage);
      times.push_back(mb < m ? at_a.extrapolate(ma, at_b, mb, m) : at_b);
      if (schedule == config::Schedule::kGpipe) {
        times.back().peak_hbm_bytes = at_a.peak_hbm_bytes + (at_b.peak_hbm_bytes - at_a.peak_hbm_bytes) *
                                                                static_cast<double>(m - ma) /
                                                                static_cast<double>(mb - ma);
      }
      per_micro_batch_s.push_back((at_b.iteration_s - at_a.iteration_s) / static_cast<double>(mb - ma));
    } else {
      // Too few micro-batches for two counts (the fewer would break the schedule's minimum): what one
      // more adds, from one count above.
      times.push_back(at_b);
      per_micro_batch_s.push_back((time(mb + step, stage).iteration_s - at_b.iteration_s) /
                                  static_cast<double>(step));
    }
  }

  // Fill and drain: the schedule's formula bubble over the slowest stage's pace. They pass through
  // the other stages, so a straggler's stage counts at the stages' typical (median) speed.
  std::vector<double> sorted_speed = stage_speed;
  std::nth_element(sorted_speed.begin(), sorted_speed.begin() + pp / 2, sorted_speed.end());
  const double typical_speed = sorted_speed[static_cast<size_t>(pp / 2)];
  double slowest_per_mb = 0;
  analytic::PassShares shares;  // of the slowest stage (zero bubble fills the bubble with W passes)
  for (size_t i = 0; i < built.size(); ++i) {
    const double speed = stage_speed[static_cast<size_t>(built[i])];
    if (per_micro_batch_s[i] * speed / typical_speed > slowest_per_mb) {
      slowest_per_mb = per_micro_batch_s[i] * speed / typical_speed;
      shares = times[i].shares;
    }
  }
  const double fill_drain_s =
      analytic::pipeline_bubble_fraction(schedule, pp, m, shapes.vpp, shares) * md * slowest_per_mb;

  IterationTimeEstimate e;
  double built_host_peak = 0;
  for (const StageTime& t : times) {
    if (t.iteration_s + fill_drain_s > e.iteration_s) {
      e.iteration_s = t.iteration_s + fill_drain_s;
      e.breakdown = t.breakdown;
      e.breakdown.bubble_s += fill_drain_s;
    }
    e.peak_hbm_bytes = std::max(e.peak_hbm_bytes, t.peak_hbm_bytes);
    built_host_peak = std::max(built_host_peak, t.peak_host_bytes);
  }
  // Stages not built repeat a built one's work with at most its host memory.
  std::vector<double> class_host_peaks(static_cast<size_t>(pp), built_host_peak);
  for (size_t i = 0; i < built.size(); ++i) {
    class_host_peaks[static_cast<size_t>(built[i])] = times[i].peak_host_bytes;
  }
  e.peak_host_bytes_per_node =
      workload::peak_host_bytes_per_node(plan, class_host_peaks, scenario.cluster.topology.node.gpus);

  const double gpus = static_cast<double>(plan.world_size());
  if (detail == EstimateDetail::kFull) {
    // Every stage's kernels, each rank of a stage running those of its representative: a stage not built
    // runs those of a built one with the same layers, embedding and head, else its own graphs give them.
    const workload::StageLayout layout = workload::partition_layers(shapes);
    const auto stage_key = [&](int64_t stage) {
      std::vector<int64_t> key;
      for (int64_t chunk = 0; chunk < shapes.vpp; ++chunk) {
        const int64_t v = layout.virtual_stage(stage, chunk);
        key.insert(key.end(), {layout.layer_count[static_cast<size_t>(v)], layout.has_embedding(v) ? 1 : 0,
                               layout.has_head(v) ? 1 : 0});
      }
      return key;
    };
    std::map<std::vector<int64_t>, double> executed;  // per rank, by stage key
    for (size_t i = 0; i < built.size(); ++i) executed.emplace(stage_key(built[i]), times[i].executed_flops);
    double per_rank_sum = 0;
    for (int64_t stage = 0; stage < pp; ++stage) {
      const auto [it, added] = executed.try_emplace(stage_key(stage), 0.0);
      if (added) {
        const auto flops = [&](int64_t micro_batches) {
          return workload::flop_totals(stages.graph(stage, micro_batches)).executed;
        };
        it->second =
            mb == m ? flops(m) : affine(flops(ma), flops(mb), (md - ma) / static_cast<double>(mb - ma));
      }
      per_rank_sum += it->second;
    }
    e.executed_flops = per_rank_sum * gpus / static_cast<double>(pp);
  }
  std::tie(e.model_flops, e.hardware_flops) = report_flops(scenario);
  e.tokens_per_s =
      static_cast<double>(scenario.training.global_batch * scenario.model.seq_len) / e.iteration_s;
  e.mfu = e.model_flops / (e.iteration_s * gpus * compute.peak_flops_per_s(scenario.training.dtype));
  e.fits = scenario.memory_fits(e.peak_hbm_bytes, e.peak_host_bytes_per_node);
  return e;
}

double iteration_lower_bound_s(const config::Scenario& scenario) {
  const workload::ParallelPlan plan = workload::make_plan(scenario);
  const workload::RankShapes shapes = workload::derive_shapes(scenario, plan);
  const config::Schedule schedule = scenario.parallelism.schedule;
  WarningLog warnings;
  const cost::ComputeModel compute(scenario.cluster.hardware, &warnings);
  const StageGraphs stages(scenario, plan, shapes);
  // The fewest micro-batches the schedule runs, and twice that (both valid counts).
  const int64_t fewest =
      std::max(config::min_micro_batches(schedule, shapes.pp),
               config::micro_batches_multiple_of_pp(schedule, shapes.vpp) ? shapes.pp : int64_t{1});
  // The kernel time of the compute streams of `stage` with `micro_batches` micro-batches.
  const auto kernels_s = [&](int64_t stage, int64_t micro_batches) {
    const workload::Graph graph = stages.graph(stage, micro_batches);
    const std::vector<double> duration = cost::compute_durations(graph, compute, stages.speed(stage));
    double total_s = 0;
    for (workload::OpId id = 0; id < graph.size(); ++id) {
      const Op& op = graph.op(id);
      if (workload::is_kernel(op.kind) &&
          (op.stream == workload::Stream::kCompute || op.stream == workload::Stream::kCompute2)) {
        total_s += duration[id];
      }
    }
    return total_s;
  };
  double bound_s = 0;
  for (const int64_t stage : stages_to_build(shapes, stages.speeds())) {
    // Every micro-batch runs the same kernels on a stage, and what only the first or the last runs is in
    // both graphs, so the total is affine in the micro-batch count: two counts give it at m.
    const double at_fewest_s = kernels_s(stage, fewest);
    const double at_m_s = shapes.micro_batches == fewest
                              ? at_fewest_s
                              : at_fewest_s + (kernels_s(stage, 2 * fewest) - at_fewest_s) *
                                                  static_cast<double>(shapes.micro_batches - fewest) /
                                                  static_cast<double>(fewest);
    bound_s = std::max(bound_s, at_m_s);
  }
  return bound_s;
}

report::RunMetrics run_metrics(const config::Scenario& scenario, const IterationTimeEstimate& e) {
  const auto gpus = static_cast<double>(scenario.cluster.gpus);
  const double peak_s =
      e.iteration_s * gpus * *scenario.cluster.hardware.peak_flops_per_s(scenario.training.dtype);
  report::RunMetrics m;
  m.gpus = scenario.cluster.gpus;
  m.iteration_time_s = e.iteration_s;
  m.tokens_per_s = e.tokens_per_s;
  m.tflops_per_gpu = e.model_flops / (e.iteration_s * gpus) / 1e12;
  m.mfu = e.mfu;
  m.hfu = e.hardware_flops / peak_s;
  m.executed_flops_utilization = e.executed_flops / peak_s;
  m.breakdown = e.breakdown;
  m.memory = report::memory_verdict(scenario, e.peak_hbm_bytes, e.peak_host_bytes_per_node);
  return m;
}

}  // namespace trainsim::estimate
