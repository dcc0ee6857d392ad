#include "sim/engine/ideal_engine.h"

#include <algorithm>
#include <deque>
#include <map>
#include <optional>
#include <queue>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "sim/cost/op_cost.h"
#include "sim/cost/rank_schedule.h"
#include "sim/engine/rank_progress.h"

namespace trainsim::engine {
// A namespace of its own: the SimGrid engine's file, compiled in the same unity batch, has
// bookkeeping types of the same names.
namespace event_loop {
namespace {

using workload::Graph;
using workload::Op;
using workload::OpId;
using workload::OpKind;
using workload::Stream;

constexpr size_t kP2p = static_cast<size_t>(Stream::kP2p);

struct JobState;

// Where one stream of a rank is: the next op in stream order and its iteration, and whether an op of
// it is in progress (or waits for its issue time or for the GPU).
struct StreamState {
  size_t cursor = 0;
  int iteration = 0;
  bool busy = false;
};

// A kernel waiting for the GPU of two lanes.
struct LaneRequest {
  OpId op = workload::kNoOp;
  double start_s = 0;
};

struct RankState : RankProgress {
  JobState* job = nullptr;
  std::array<StreamState, workload::kStreamCount> streams;
  bool gpu_busy = false;              // two lanes: a kernel holds the GPU
  std::deque<LaneRequest> lane_wait;  // two lanes: kernels waiting for it, in the order they asked
};

struct Member {
  RankState* rank = nullptr;
  OpId op = workload::kNoOp;
  double arrived_s = 0;
};

struct CollectiveInstance {
  CollectiveKey key;
  int expected = 0;
  double launch_s = 0;
  std::vector<Member> members;  // the simulated members that have arrived
};

using P2pEnd = engine::P2pEnd<RankState>;

// A message in flight between `send` and `recv` (either may stand for an unsimulated peer).
struct Transfer {
  P2pEnd send;
  P2pEnd recv;
  double launch_s = 0;
  int iteration = 0;
};

struct GroupInfo {
  cost::GroupLinks links;
  int64_t size = 0;
  int simulated = 0;
};

struct JobState : JobProgress {
  std::map<CollectiveKey, CollectiveInstance> collectives;
  P2pRendezvous<RankState> p2p;
  std::map<std::pair<int, int32_t>, GroupInfo> groups;
};

enum class EventKind {
  kStart,          // the job's ranks begin
  kOpEnd,          // a kernel, copy or host synchronisation ends
  kCollectiveEnd,  // a collective's transfer ends
  kTransferEnd,    // a message arrives
  kIssued,         // the host has issued the op a stream waits for
};

struct Event {
  double t = 0;
  uint64_t seq = 0;  // ties at one instant: in the order they were scheduled
  EventKind kind = EventKind::kOpEnd;
  RankState* rank = nullptr;
  OpId op = workload::kNoOp;
  size_t stream = 0;
  int iteration = 0;
  double start_s = 0;
  double launch_s = 0;
  JobState* job = nullptr;
  CollectiveInstance* collective = nullptr;
  size_t transfer = 0;

  bool operator>(const Event& other) const { return std::tie(t, seq) > std::tie(other.t, other.seq); }
};

// A kernel that starts at the end of the current instant.
struct KernelStart {
  RankState* rank = nullptr;
  OpId op = workload::kNoOp;
  int iteration = 0;
  double start_s = 0;
  double launch_s = 0;
};

class EventLoop {
 public:
  EventLoop(const std::vector<Job>& jobs, const cost::IdealTiers& network, const JobsOptions& options)
      : inputs_(jobs), network_(network), options_(options) {}

  std::vector<EngineResult> run();

 private:
  void schedule(Event event);
  // Moves the stream on as far as it can at the current instant.
  void advance(RankState& rs, size_t stream);
  void advance_p2p(RankState& rs);
  void advance_all(RankState& rs);
  // Whether op `id` of `stream` has been issued by the host; if it will be later, the stream waits.
  bool issued(RankState& rs, size_t stream, OpId id);
  void run_op(RankState& rs, OpId id);
  void arrive(RankState& rs, OpId id);
  void start_p2p(RankState& rs, OpId id);
  void transfer(const P2pEnd& send, const P2pEnd& recv, int64_t src, int64_t dst, double bytes);
  void start_kernels();
  void handle(const Event& e);
  void finish(RankState& rs, OpId id, int iteration, double start_s, double launch_s);
  void end_iteration(RankState& rs, int iteration);
  void check_budgets();
  const GroupInfo& group(JobState& job, workload::GroupId id);
  bool stopped() const { return !stopped_by_.empty() || window_closed_; }

  const std::vector<Job>& inputs_;
  const cost::IdealTiers& network_;
  const JobsOptions& options_;
  std::vector<JobState> jobs_;
  std::vector<RankState> states_;
  std::priority_queue<Event, std::vector<Event>, std::greater<>> events_;
  uint64_t next_seq_ = 0;
  double now_ = 0;
  std::deque<std::pair<RankState*, size_t>> to_advance_;
  std::vector<KernelStart> kernels_;  // starting at the end of this instant
  std::vector<Transfer> transfers_;
  std::vector<size_t> free_transfers_;
  uint64_t ops_executed_ = 0;
  uint64_t ops_total_ = 0;
  std::optional<RunClock> clock_;
  std::string stopped_by_;
  bool window_closed_ = false;
  double stopped_at_s_ = 0;
  uint64_t stopped_after_ops_ = 0;
};

void EventLoop::schedule(Event event) {
  event.seq = next_seq_++;
  events_.push(event);
}

const GroupInfo& EventLoop::group(JobState& job, workload::GroupId id) {
  const auto key = std::make_pair(static_cast<int>(id.kind), id.index);
  auto it = job.groups.find(key);
  if (it == job.groups.end()) {
    std::vector<int64_t> gpus;
    GroupInfo info;
    for (const int64_t m : job.input->plan->members(id)) {
      gpus.push_back(job.gpu_of(m));
      info.simulated += job.simulated(m) != nullptr ? 1 : 0;
    }
    info.size = static_cast<int64_t>(gpus.size());
    info.links = cost::group_links(network_, gpus);
    it = job.groups.emplace(key, info).first;
  }
  return it->second;
}

bool EventLoop::issued(RankState& rs, size_t stream, OpId id) {
  if (!rs.host) return true;
  const std::optional<double> at = rs.host->issue_s(id);
  if (!at) return false;  // behind a host synchronisation: moved on when it ends
  if (*at > now_) {
    rs.streams[stream].busy = true;
    Event e;
    e.t = *at;
    e.kind = EventKind::kIssued;
    e.rank = &rs;
    e.stream = stream;
    schedule(e);
    return false;
  }
  return true;
}

void EventLoop::advance(RankState& rs, size_t stream) {
  if (stream == kP2p) return advance_p2p(rs);
  StreamState& ss = rs.streams[stream];
  const std::vector<OpId>& ops = rs.index->stream_ops[stream];
  if (ops.empty()) return;
  while (!ss.busy && !stopped()) {
    if (ss.cursor == ops.size()) {
      if (rs.finished || rs.iteration == ss.iteration) return;
      ++ss.iteration;
      ss.cursor = 0;
    }
    const OpId id = ops[ss.cursor];
    if (rs.iteration != ss.iteration || rs.remaining[id] != 0 || !issued(rs, stream, id)) return;
    ++ss.cursor;
    run_op(rs, id);
  }
}

// Sends and receives are not ordered among themselves (NCCL groups them): each starts as soon as its
// predecessors are done, in the order they became ready.
void EventLoop::advance_p2p(RankState& rs) {
  StreamState& ss = rs.streams[kP2p];
  while (!ss.busy && !stopped() && !rs.p2p_ready.empty()) {
    const OpId id = rs.p2p_ready.front();
    if (!issued(rs, kP2p, id)) return;
    rs.p2p_ready.pop_front();
    run_op(rs, id);
  }
}

void EventLoop::advance_all(RankState& rs) {
  for (size_t s = 0; s < workload::kStreamCount; ++s) to_advance_.emplace_back(&rs, s);
}

void EventLoop::run_op(RankState& rs, OpId id) {
  const Op& op = rs.graph->op(id);
  StreamState& ss = rs.streams[static_cast<size_t>(op.stream)];
  Event end;
  end.kind = EventKind::kOpEnd;
  end.rank = &rs;
  end.op = id;
  end.iteration = rs.iteration;
  end.start_s = now_;
  end.launch_s = now_;
  switch (op.kind) {
    case OpKind::kGemm:
    case OpKind::kAttentionForward:
    case OpKind::kAttentionBackward:
    case OpKind::kMemory:
    case OpKind::kOptimizerStep:
      ss.busy = true;
      if (rs.index->two_lanes && rs.gpu_busy) {
        rs.lane_wait.push_back({id, now_});
        return;
      }
      rs.gpu_busy = rs.index->two_lanes;
      kernels_.push_back({&rs, id, rs.iteration, now_, now_});
      return;
    case OpKind::kHostSync:
      ss.busy = true;
      end.t = now_ + (*rs.duration)[id];
      schedule(end);
      return;
    case OpKind::kCopy:
      ss.busy = true;
      end.t = now_ + cost::copy_s(network_, op.bytes);
      schedule(end);
      return;
    case OpKind::kCollective:
      ss.busy = true;
      arrive(rs, id);
      return;
    case OpKind::kSend:
    case OpKind::kRecv:
      start_p2p(rs, id);  // finished by the transfer (or its mirror); the stream goes on
      return;
    case OpKind::kAlloc:
    case OpKind::kFree:
      rs.memory.apply(op, now_);
      break;
    case OpKind::kStreamWait:  // ordering only: its predecessors are done
      break;
  }
  finish(rs, id, rs.iteration, now_, now_);
}

// The collective occupies every member from its arrival to the end of the transfer, which begins
// when the last simulated member arrives.
void EventLoop::arrive(RankState& rs, OpId id) {
  JobState& job = *rs.job;
  const Op& op = rs.graph->op(id);
  const workload::GroupId g = rs.renaming.group(op.collective.group);
  const CollectiveKey key{static_cast<int>(g.kind), g.index, op.collective.seq, rs.iteration};
  const GroupInfo& info = group(job, g);
  CollectiveInstance& instance = job.collectives[key];
  if (instance.members.empty()) {
    instance.key = key;
    instance.expected = info.simulated;
  }
  instance.members.push_back({&rs, id, now_});
  rs.collectives_in_flight.change(1, now_);
  if (static_cast<int>(instance.members.size()) < instance.expected) return;
  instance.launch_s = now_;
  Event end;
  end.t = now_ + cost::collective_s(op.collective.kind, info.size, op.bytes, info.links);
  end.kind = EventKind::kCollectiveEnd;
  end.job = &job;
  end.collective = &instance;
  end.iteration = rs.iteration;
  schedule(end);
}

void EventLoop::transfer(const P2pEnd& send, const P2pEnd& recv, int64_t src, int64_t dst, double bytes) {
  const JobState& job = send.rank != nullptr ? *send.rank->job : *recv.rank->job;
  size_t index = transfers_.size();
  if (free_transfers_.empty()) {
    transfers_.emplace_back();
  } else {
    index = free_transfers_.back();
    free_transfers_.pop_back();
  }
  const int iteration = (send.rank != nullptr ? send.rank : recv.rank)->iteration;
  transfers_[index] = Transfer{send, recv, now_, iteration};
  Event end;
  end.t = now_ + cost::send_s(network_, job.gpu_of(src), job.gpu_of(dst), bytes);
  end.kind = EventKind::kTransferEnd;
  end.transfer = index;
  schedule(end);
}

void EventLoop::start_p2p(RankState& rs, OpId id) {
  const Op& op = rs.graph->op(id);
  const bool is_send = op.kind == OpKind::kSend;
  const int64_t peer = rs.renaming.peer(op.p2p.peer);
  const int64_t src = is_send ? rs.rank : peer;
  const int64_t dst = is_send ? peer : rs.rank;
  const int iteration = rs.iteration;
  if (rs.job->simulated(peer) != nullptr) {
    const auto met = rs.job->p2p.arrive(src, dst, op.p2p.tag, iteration, is_send, {&rs, id, now_});
    if (met) transfer(met->send, met->recv, src, dst, op.bytes);
    return;
  }
  if (is_send) {  // to an unsimulated mirror of a simulated rank: the network still carries it
    transfer({&rs, id, now_}, {}, src, dst, op.bytes);
    return;
  }
  // A receive from an unsimulated peer completes with this rank's own send of the same tag: by
  // symmetry the peer sends to us exactly when we send to our other neighbour.
  if (!rs.index->send_tags.contains(op.p2p.tag) || rs.mirror_send_done.erase({op.p2p.tag, iteration}) != 0) {
    finish(rs, id, iteration, now_, now_);
  } else {
    rs.mirror_recv_waiting[{op.p2p.tag, iteration}] = {id, now_};
  }
}

// Kernels start once everything else at their instant has happened, slowed while a collective of
// their rank is in flight.
void EventLoop::start_kernels() {
  std::vector<KernelStart> starting;
  starting.swap(kernels_);
  for (const KernelStart& k : starting) {
    Event end;
    end.t = now_ + cost::kernel_time_s((*k.rank->duration)[k.op],
                                       k.rank->collectives_in_flight.after_instant(now_),
                                       *k.rank->job->input->compute);
    end.kind = EventKind::kOpEnd;
    end.rank = k.rank;
    end.op = k.op;
    end.iteration = k.iteration;
    end.start_s = k.start_s;
    end.launch_s = k.launch_s;
    schedule(end);
  }
}

void EventLoop::handle(const Event& e) {
  switch (e.kind) {
    case EventKind::kStart:
      advance_all(*e.rank);
      return;
    case EventKind::kIssued:
      e.rank->streams[e.stream].busy = false;
      to_advance_.emplace_back(e.rank, e.stream);
      return;
    case EventKind::kOpEnd: {
      RankState& rs = *e.rank;
      if (rs.index->two_lanes && workload::is_kernel(rs.graph->op(e.op).kind)) {
        rs.gpu_busy = false;
        if (!rs.lane_wait.empty()) {
          const LaneRequest next = rs.lane_wait.front();
          rs.lane_wait.pop_front();
          rs.gpu_busy = true;
          kernels_.push_back({&rs, next.op, rs.iteration, next.start_s, now_});
        }
      }
      finish(rs, e.op, e.iteration, e.start_s, e.launch_s);
      return;
    }
    case EventKind::kCollectiveEnd: {
      const CollectiveInstance instance = std::move(*e.collective);
      e.job->collectives.erase(instance.key);
      for (const Member& m : instance.members) m.rank->collectives_in_flight.change(-1, now_);
      for (const Member& m : instance.members) {
        finish(*m.rank, m.op, e.iteration, m.arrived_s, instance.launch_s);
      }
      return;
    }
    case EventKind::kTransferEnd: {
      const Transfer t = transfers_[e.transfer];
      free_transfers_.push_back(e.transfer);
      if (t.send.rank != nullptr) finish(*t.send.rank, t.send.op, t.iteration, t.send.issued_s, t.launch_s);
      if (t.recv.rank != nullptr) finish(*t.recv.rank, t.recv.op, t.iteration, t.recv.issued_s, t.launch_s);
      // A mirrored receive waiting for this (unsimulated peer's) send.
      if (t.send.rank != nullptr && t.recv.rank == nullptr) {
        RankState& sender = *t.send.rank;
        const auto key = std::make_pair(sender.graph->op(t.send.op).p2p.tag, t.iteration);
        const auto waiting = sender.mirror_recv_waiting.find(key);
        if (waiting != sender.mirror_recv_waiting.end()) {
          const auto [recv, issued_s] = waiting->second;
          sender.mirror_recv_waiting.erase(waiting);
          finish(sender, recv, t.iteration, issued_s, t.launch_s);
        } else {
          sender.mirror_send_done.insert(key);
        }
      }
      return;
    }
  }
}

void EventLoop::finish(RankState& rs, OpId id, int iteration, double start_s, double launch_s) {
  const Op& op = rs.graph->op(id);
  const auto stream = static_cast<size_t>(op.stream);
  if (op.kind != OpKind::kSend && op.kind != OpKind::kRecv) {
    rs.streams[stream].busy = false;
    to_advance_.emplace_back(&rs, stream);
  }
  if (rs.host && op.kind == OpKind::kHostSync) {
    rs.host->finished(id, now_);
    advance_all(rs);
  }
  rs.record(id, iteration, start_s, launch_s, now_, options_.iterations);
  ++rs.job->ops_executed;
  ++ops_executed_;
  check_budgets();
  for (const OpId next : rs.index->successors.of(id)) {
    if (--rs.remaining[next] != 0) continue;
    const Stream s = rs.graph->op(next).stream;
    if (s == Stream::kP2p) rs.p2p_ready.push_back(next);
    to_advance_.emplace_back(&rs, static_cast<size_t>(s));
  }
  if (rs.total_done == static_cast<uint64_t>(iteration + 1) * rs.graph->size()) {
    if (iteration + 1 == options_.iterations) rs.run.finish_s = now_;
    end_iteration(rs, iteration);
  }
}

void EventLoop::end_iteration(RankState& rs, int iteration) {
  if (window_closed_) return;
  switch (engine::end_iteration(jobs_, *rs.job, iteration, now_, options_.iterations, ops_total_)) {
    case AfterIteration::kCloseWindow:
      window_closed_ = true;
      return;
    case AfterIteration::kNext:
      rs.begin_iteration(iteration + 1, now_);
      advance_all(rs);
      return;
    case AfterIteration::kFinished:
      rs.finished = true;
      return;
  }
}

void EventLoop::check_budgets() {
  if (stopped()) return;
  stopped_by_ = clock_->after_op(ops_executed_, ops_total_, now_);
  if (stopped_by_.empty()) return;
  stopped_at_s_ = now_;
  stopped_after_ops_ = ops_executed_;
}

std::vector<EngineResult> EventLoop::run() {
  clock_.emplace(options_);
  ops_total_ = set_up_jobs(inputs_, options_.iterations, jobs_, states_, [&](RankState& rs) {
    Event start;
    start.t = rs.job->input->start_s;
    start.kind = EventKind::kStart;
    start.rank = &rs;
    schedule(start);
  });
  while (true) {
    while (!to_advance_.empty()) {
      const auto [rs, stream] = to_advance_.front();
      to_advance_.pop_front();
      advance(*rs, stream);
    }
    if (!kernels_.empty() && (events_.empty() || events_.top().t > now_)) {
      start_kernels();
      continue;
    }
    if (events_.empty() || !stopped_by_.empty()) break;
    const Event e = events_.top();
    events_.pop();
    now_ = e.t;
    handle(e);
  }
  if (!stopped_by_.empty())
    throw BudgetExceededError(stopped_by_, stopped_at_s_, stopped_after_ops_, ops_total_);
  std::vector<const RankProgress*> ranks(states_.size());
  for (size_t i = 0; i < states_.size(); ++i) ranks[i] = &states_[i];
  if (!window_closed_) throw_if_unfinished(ranks, jobs_.size() > 1, now_);
  std::vector<EngineResult> results;
  for (JobState& job : jobs_) results.push_back(job.result(options_.iterations));
  return results;
}

}  // namespace
}  // namespace event_loop

std::vector<EngineResult> simulate_jobs(const std::vector<Job>& jobs, const cost::IdealTiers& network,
                                        const JobsOptions& options) {
  return event_loop::EventLoop(jobs, network, options).run();
}

EngineResult simulate(const workload::ParallelPlan& plan, const std::vector<int64_t>& ranks,
                      const std::vector<const workload::Graph*>& graphs, const cost::IdealTiers& network,
                      const cost::ComputeModel& compute, const EngineOptions& options) {
  const std::vector<Job> jobs{Job{&plan, ranks, graphs, &compute, options.compute_speed, {}, 0}};
  const JobsOptions limits{options.iterations, options.max_events, options.time_limit_s, MirrorMode::kNone,
                           options.progress};
  return std::move(simulate_jobs(jobs, network, limits).front());
}

}  // namespace trainsim::engine
