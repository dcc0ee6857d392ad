#include "sim/engine/rank_progress.h"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

#include "sim/cost/op_cost.h"

namespace trainsim::engine {

using workload::Op;
using workload::OpId;
using workload::OpKind;
using workload::Stream;

GraphIndex::GraphIndex(const workload::Graph& graph)
    : pred_count(graph.size()), successors(graph.successors()), two_lanes(cost::has_two_lanes(graph)) {
  for (OpId id = 0; id < graph.size(); ++id) {
    pred_count[id] = static_cast<uint32_t>(graph.predecessors(id).size());
    const Op& op = graph.op(id);
    stream_ops[static_cast<size_t>(op.stream)].push_back(id);
    if (op.kind == OpKind::kSend) send_tags.insert(op.p2p.tag);
  }
  runs_into_next.assign(graph.size(), 0);
  for (const std::vector<OpId>& ops : stream_ops) {
    for (size_t i = 0; i + 1 < ops.size(); ++i) {
      const auto next = successors.of(ops[i]);
      const bool runs = workload::is_kernel(graph.op(ops[i]).kind) &&
                        workload::is_kernel(graph.op(ops[i + 1]).kind) && next.size() == 1 &&
                        next[0] == ops[i + 1];
      runs_into_next[ops[i]] = runs ? 1 : 0;
    }
  }
}

void RankProgress::init(JobProgress& owner_job, size_t at) {
  const Job& input = *owner_job.input;
  owner = &owner_job;
  rank = input.ranks[at];
  gpu = owner_job.gpu_of(rank);
  graph = input.graphs[at];
  renaming = workload::Renaming(*input.plan, graph->info.rank, rank);
  auto& shared_index = owner_job.indexes[graph];
  if (!shared_index) shared_index = std::make_unique<const GraphIndex>(*graph);
  index = shared_index.get();
  const double speed = input.compute_speed.empty() ? 1.0 : input.compute_speed[at];
  auto& shared_duration = owner_job.durations[{graph, speed}];
  if (!shared_duration) {
    shared_duration =
        std::make_unique<const std::vector<double>>(cost::compute_durations(*graph, *input.compute, speed));
  }
  duration = shared_duration.get();
  done.assign(graph->size(), 0);
  run.rank = rank;
  run.symmetry_class = graph->info.symmetry_class;
  run.start_s.assign(graph->size(), 0.0);
  run.end_s.assign(graph->size(), 0.0);
  run.launch_s.assign(graph->size(), 0.0);
  if (input.compute->host_dispatch_s() > 0) host.emplace(*graph, input.compute->host_dispatch_s());
  begin_iteration(0, input.start_s);
}

void RankProgress::begin_iteration(int next, double now_s) {
  iteration = next;
  remaining = index->pred_count;
  if (host) host->begin_iteration(now_s);
  for (const OpId id : index->stream_ops[static_cast<size_t>(Stream::kP2p)]) {
    if (index->pred_count[id] == 0) p2p_ready.push_back(id);
  }
}

void RankProgress::record(OpId id, int in_iteration, double start_s, double launch_s, double end_s,
                          int iterations) {
  if (in_iteration < iterations) {
    run.start_s[id] = start_s;
    run.launch_s[id] = launch_s;
    run.end_s[id] = end_s;
  }
  done[id] = in_iteration + 1;
  ++total_done;
}

void JobProgress::init(const Job& job_input, size_t job_index, int iterations) {
  if (!job_input.compute_speed.empty() && job_input.compute_speed.size() != job_input.ranks.size()) {
    throw std::invalid_argument(fmt::format("{} compute speeds for {} simulated ranks",
                                            job_input.compute_speed.size(), job_input.ranks.size()));
  }
  input = &job_input;
  index = job_index;
  planned = iterations;
}

void JobProgress::add(RankProgress& rank) {
  members.push_back(&rank);
  by_rank.emplace(rank.rank, &rank);
  ranks_with_ops += rank.graph->size() > 0 ? 1 : 0;
  ops_per_iteration += rank.graph->size();
}

void JobProgress::begin(int iterations) {
  if (ranks_with_ops > 0) return;
  completed = iterations;
  iteration_end_s.assign(static_cast<size_t>(iterations), input->start_s);
}

bool JobProgress::count_end(int iteration, double now_s) {
  const auto i = static_cast<size_t>(iteration);
  if (iteration_end_s.size() <= i) {
    iteration_end_s.resize(i + 1, 0.0);
    ranks_done.resize(i + 1, 0);
  }
  iteration_end_s[i] = std::max(iteration_end_s[i], now_s);
  if (++ranks_done[i] != ranks_with_ops) return false;
  completed = iteration + 1;
  return true;
}

EngineResult JobProgress::result(int iterations) {
  EngineResult out;
  std::vector<double>& ends = iteration_end_s;
  ends.resize(static_cast<size_t>(completed));  // an iteration cut short by the window's close: not run
  const auto last = static_cast<size_t>(iterations - 1);
  out.total_time_s = ends[last];
  out.iteration_time_s = ends[last] - (last > 0 ? ends[last - 1] : input->start_s);
  out.iteration_end_s = ends;
  out.ops_executed = ops_executed;
  double latest = -1;
  for (RankProgress* rs : members) {
    if (rs->run.finish_s > latest) {
      latest = rs->run.finish_s;
      out.critical_rank = rs->rank;
    }
    rs->run.peak_hbm_bytes = rs->memory.peak_hbm_bytes();
    rs->run.hbm_at_peak_bytes = rs->memory.hbm_at_peak_bytes();
    rs->run.peak_host_bytes = rs->memory.peak_host_bytes();
    rs->run.hbm_samples = std::move(rs->memory.hbm_samples());
    out.ranks.push_back(std::move(rs->run));
  }
  return out;
}

RunClock::RunClock(const JobsOptions& options)
    : options_(options),
      started_(std::chrono::steady_clock::now()),
      next_report_s_(options.progress.every_s) {}

std::string RunClock::after_op(uint64_t ops_executed, uint64_t ops_total, double simulated_s) {
  if (ops_executed >= ops_total) return "";
  if (options_.max_events > 0 && ops_executed >= options_.max_events) return "max-events";
  const bool watched = options_.time_limit_s > 0 || options_.progress.call;
  if (!watched || ops_executed % kClockCheckOps != 0) return "";
  const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
  if (options_.time_limit_s > 0 && wall_s > options_.time_limit_s) return "time-limit";
  if (options_.progress.call && wall_s >= next_report_s_) {
    options_.progress.call({ops_executed, ops_total, simulated_s, wall_s});
    next_report_s_ = wall_s + options_.progress.every_s;
  }
  return "";
}

namespace {

// The first unfinished op of each stream of `rs` (the one that waits), appended to `out` until
// `shown` reaches twelve.
void describe_waiting(const RankProgress& rs, bool several_jobs, std::string& out, int& shown) {
  const int iteration = static_cast<int>(rs.total_done / std::max<size_t>(1, rs.graph->size()));
  const std::string job = several_jobs ? fmt::format("job {} ", rs.owner->index) : "";
  for (size_t s = 0; s < rs.index->stream_ops.size() && shown < 12; ++s) {
    for (const OpId id : rs.index->stream_ops[s]) {
      if (rs.done[id] > iteration) continue;
      const Op& op = rs.graph->op(id);
      std::string what =
          fmt::format("{}rank {} stream {}: op {} ({} {}, layer {}, micro-batch {})", job, rs.rank,
                      workload::to_string(static_cast<Stream>(s)), id, workload::to_string(op.kind),
                      workload::to_string(op.label), op.layer, op.micro_batch);
      if (op.kind == OpKind::kCollective) {
        const workload::GroupId group = rs.renaming.group(op.collective.group);
        what += fmt::format(" on group {} {} (#{})", workload::to_string(group.kind), group.index,
                            op.collective.seq);
      } else if (op.kind == OpKind::kSend || op.kind == OpKind::kRecv) {
        what += fmt::format(" with rank {} tag {}", rs.renaming.peer(op.p2p.peer), op.p2p.tag);
      }
      out += "\n  " + what;
      ++shown;
      break;
    }
  }
}

}  // namespace

void throw_if_unfinished(const std::vector<const RankProgress*>& ranks, bool several_jobs, double now_s) {
  std::string waiting;
  int shown = 0;
  bool unfinished = false;
  for (const RankProgress* rs : ranks) {
    if (rs->total_done == static_cast<uint64_t>(rs->owner->planned) * rs->graph->size()) continue;
    unfinished = true;
    describe_waiting(*rs, several_jobs, waiting, shown);
  }
  if (!unfinished) return;
  if (shown == 12) waiting += "\n  ...";
  throw DeadlockError(fmt::format(
      "the simulation stopped at t = {:.6f} s with ops that can never run (a receive without its send, "
      "or a collective a member never enters):{}",
      now_s, waiting));
}

}  // namespace trainsim::engine
