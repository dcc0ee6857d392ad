#include "sim/engine/engine.h"

#include <algorithm>
#include <array>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <tuple>
#include <xbt/log.h>

#include <fmt/format.h>
#include <simgrid/s4u.hpp>
#include <simgrid/simix.hpp>

#include "sim/cost/op_cost.h"
#include "sim/cost/rank_schedule.h"
#include "sim/engine/mirror_traffic.h"
#include "sim/engine/rank_progress.h"

namespace trainsim::engine {
namespace sg4 = simgrid::s4u;
using workload::Graph;
using workload::Op;
using workload::OpId;
using workload::OpKind;
using workload::Stream;

BudgetExceededError::BudgetExceededError(std::string limit, double simulated_s, uint64_t ops_executed,
                                         uint64_t ops_total)
    : std::runtime_error(fmt::format(
          "stopped by the {} budget after {} of {} ops ({:.1f}%), at simulated time {:.6f} s", limit,
          ops_executed, ops_total,
          100.0 * static_cast<double>(ops_executed) / static_cast<double>(std::max<uint64_t>(ops_total, 1)),
          simulated_s)),
      limit_(std::move(limit)),
      simulated_s_(simulated_s),
      ops_executed_(ops_executed),
      ops_total_(ops_total) {}

namespace {

struct JobState;

struct RankState : RankProgress {
  JobState* job = nullptr;
  // Per stream, its actor while it waits (suspended), so that an op's end wakes only the streams it
  // made ready (waking every stream of the rank at each op cost a seventh of a collapsed run). Actors
  // run one at a time, so a suspension and a resumption (two simcalls) replace a condition variable
  // and its mutex (four or five).
  std::array<sg4::ActorPtr, workload::kStreamCount> waiter;
  // Wakes the actor of `stream` if it waits (a resumption is a simcall: skipped when none does).
  void notify(size_t stream) {
    if (const sg4::ActorPtr actor = std::move(waiter[stream])) actor->resume();
  }
  // Wakes every stream's actor (a new iteration, the end, or the host issuing more).
  void notify_all() {
    for (size_t s = 0; s < waiter.size(); ++s) notify(s);
  }
  // The GPU, when two lanes hold kernels (workload::Stream::kCompute2): one kernel at a time, in the
  // order they became ready (SimGrid's mutexes are FIFO).
  sg4::MutexPtr gpu_lock;
};

struct CollectiveInstance {
  int expected = 0;
  int left = 0;
  bool done = false;
  double launch_s = 0;
  std::vector<RankState*> members;     // the simulated members that have arrived
  std::vector<sg4::ActorPtr> waiting;  // the members' actors suspended until it is done
  // Wakes the members waiting for it.
  void notify_all() {
    // Taken now, resumed in one simcall (as flows start): maestro runs the simcall after the actors
    // scheduled behind this one, so it must not read what they may change.
    const std::vector<sg4::ActorPtr> members = std::move(waiting);
    waiting.clear();
    simgrid::kernel::actor::simcall_answered([&members] {
      for (const sg4::ActorPtr& actor : members) actor->resume();
    });
  }
};

struct GroupInfo {
  std::vector<int64_t> gpus;  // the members' GPUs
  int simulated = 0;
};

// A job in progress: its ranks and the collectives and transfers under way among them.
struct JobState : JobProgress {
  std::map<CollectiveKey, CollectiveInstance> collectives;
  P2pRendezvous<RankState> p2p;
  std::map<std::pair<int, int32_t>, GroupInfo> groups;
};

class Simulation {
 public:
  Simulation(const std::vector<Job>& jobs, Transport& transport, const JobsOptions& options)
      : inputs_(jobs), transport_(transport), options_(options) {}

  std::vector<EngineResult> run();

 private:
  void stream_actor(RankState& rs, Stream stream);
  void p2p_actor(RankState& rs);
  // Blocks the calling actor until its job starts and returns whether it may go on.
  bool wait_for_start(const RankState& rs);
  // Blocks `stream`'s actor until `ready()` holds or the simulation stops; returns whether it goes
  // on. Suspends only when it must: each suspension is a simcall, and most ops are ready.
  template <class Ready>
  bool wait_until(RankState& rs, Stream stream, Ready ready);
  // Blocks until the host has issued op `id` (cost::HostDispatch); returns whether the simulation
  // goes on.
  bool wait_for_host(RankState& rs, OpId id);
  // Blocks `stream`'s actor until `rs` has finished `iteration`; returns whether it runs another.
  bool wait_for_next_iteration(RankState& rs, Stream stream, int iteration);
  // `rs` has just finished `iteration`: the job's bookkeeping, and the next iteration if it runs one.
  void end_iteration(RankState& rs, int iteration, double now);
  void run_op(RankState& rs, OpId id, int iteration);
  // The overlap rule for kernel `id` launched at `launch_s`: its end when a collective of its rank was
  // in flight at the launch, none when it runs unslowed. Ask once the simulated time has passed
  // `launch_s` (CollectivesInFlight answers then), for every kernel, in launch order.
  static std::optional<double> slowed_end_s(RankState& rs, OpId id, double launch_s);
  // The last op of the run of kernels that starts at ops[first] (a stream's ops) and goes through
  // the GPU back to back: while GraphIndex::runs_into_next holds and each later kernel waits only for
  // the one before it, all with a positive duration; `first` itself when there is no such run, when
  // the rank's host issues its ops (HostDispatch) or its kernels share the GPU with a second lane,
  // or under an op budget (max_events), which must count the ops in the order they end.
  size_t kernel_run_end(const RankState& rs, const std::vector<OpId>& ops, size_t first) const;
  // Runs the kernels ops[first..last] (a run of kernel_run_end) as run_op would one after the other,
  // with one sleep instead of one per kernel: each launches when the one before it ends and is slowed
  // when a collective of its rank was in flight at its launch, which is asked once the simulated time
  // has passed that instant (CollectivesInFlight answers for past instants); a slowed kernel moves
  // the ends of the rest, which are slept for again.
  void run_kernels(RankState& rs, const std::vector<OpId>& ops, size_t first, size_t last, int iteration);
  // Marks `id` finished now; it was issued at `start_s` and its work began at `launch_s`.
  void finish(RankState& rs, OpId id, int iteration, double start_s, double launch_s) {
    finish_at(rs, id, iteration, start_s, launch_s, sg4::Engine::get_clock());
  }
  // The same, for an op that ended at `end_s` (now or, inside a run of kernels, earlier).
  void finish_at(RankState& rs, OpId id, int iteration, double start_s, double launch_s, double end_s);
  // Returns when the collective began (all simulated members arrived).
  double run_collective(RankState& rs, const Op& op, int iteration);
  void start_p2p(RankState& rs, OpId id, int iteration);
  void transfer_async(RankState* sender, OpId send, double send_issued, RankState* receiver, OpId recv,
                      double recv_issued, int64_t src, int64_t dst, double bytes, int iteration);
  const GroupInfo& group(JobState& job, workload::GroupId id);
  // Mirrored traffic (MirrorTraffic): an op ends for the simulated rank once its mirrors in step
  // have ended too (those ranks meet it in every layer, so the slowest of them holds it back there,
  // as a straggler holds back its stage); the other mirrors run on an actor of their own.
  //
  // Starts the other mirrors of an op: an actor on `host` that runs play(others), if any.
  template <class T, class Play>
  void start_others(const Mirrored<T>& mirrored, sg4::Host* host, Play play);
  // Starts the mirrors of collective `op` of `rs`, an actor per group, and returns the in-step
  // groups' actors.
  std::vector<sg4::ActorPtr> start_mirrored_collectives(const RankState& rs, workload::GroupId group,
                                                        const Op& op);
  // Blocking: `rs`'s copy `op` together with its mirrors in step (one call).
  void copy_with_mirrors(const RankState& rs, const Op& op);
  // Blocking: job's send of `bytes` from rank `src` to `dst` together with its mirrors in step.
  void send_with_mirrors(const JobState& job, int64_t src, int64_t dst, double bytes);
  static void join(const std::vector<sg4::ActorPtr>& actors) {
    for (const sg4::ActorPtr& actor : actors) actor->join();
  }
  // Stops the simulation when a budget of the options is exhausted (an op has just finished at
  // `now_s`), and reports progress when due.
  void check_budgets(double now_s);
  // Ops in progress complete, no new op starts, and every waiting actor is woken to return.
  void stop_all();
  bool stopped() const { return !stopped_by_.empty() || window_closed_; }

  const std::vector<Job>& inputs_;
  Transport& transport_;
  const JobsOptions& options_;
  std::optional<MirrorTraffic> mirrors_;
  std::vector<JobState> jobs_;
  std::vector<RankState> states_;  // every job's, job by job
  uint64_t ops_executed_ = 0;
  uint64_t ops_total_ = 0;  // all ranks and the iterations planned so far
  std::optional<RunClock> clock_;
  std::string stopped_by_;  // the budget that stopped the simulation, empty while none has
  // Every job of a run of several has run the requested iterations: what the others still run does
  // not count, so the simulation ends.
  bool window_closed_ = false;
  double stop_s_ = 0;  // when the simulation stopped (a budget, or the window closing), the first time
  uint64_t stopped_after_ops_ = 0;
};

const GroupInfo& Simulation::group(JobState& job, workload::GroupId id) {
  const auto key = std::make_pair(static_cast<int>(id.kind), id.index);
  auto it = job.groups.find(key);
  if (it == job.groups.end()) {
    GroupInfo info;
    for (const int64_t m : job.input->plan->members(id)) {
      info.gpus.push_back(job.gpu_of(m));
      info.simulated += job.simulated(m) != nullptr ? 1 : 0;
    }
    it = job.groups.emplace(key, std::move(info)).first;
  }
  return it->second;
}

template <class T, class Play>
void Simulation::start_others(const Mirrored<T>& mirrored, sg4::Host* host, Play play) {
  if (mirrored.others.empty()) return;
  sg4::Actor::create("mirror", host, [list = &mirrored.others, play] { play(*list); });
}

std::vector<sg4::ActorPtr> Simulation::start_mirrored_collectives(const RankState& rs,
                                                                  workload::GroupId group, const Op& op) {
  if (!mirrors_) return {};
  sg4::Host* host = transport_.host_of(rs.gpu);
  const auto start_each = [this, host, kind = op.collective.kind,
                           bytes = op.bytes](const std::vector<MirrorTraffic::Gpus>& groups) {
    std::vector<sg4::ActorPtr> each;
    each.reserve(groups.size());
    simgrid::kernel::actor::simcall_answered([&] {  // one simcall for all (see FlowRunner::start_transfers)
      for (const MirrorTraffic::Gpus& gpus : groups) {
        each.push_back(sg4::Actor::create(
            "mirror", host, [this, kind, &gpus, bytes] { transport_.collective(kind, gpus, bytes); }));
      }
    });
    return each;
  };
  const Mirrored<MirrorTraffic::Gpus>& mirrored = mirrors_->collectives(rs.job->index, group, op);
  start_others(mirrored, host,
               [start_each](const std::vector<MirrorTraffic::Gpus>& groups) { join(start_each(groups)); });
  return start_each(mirrored.in_step);
}

void Simulation::copy_with_mirrors(const RankState& rs, const Op& op) {
  if (!mirrors_) {
    transport_.copy(rs.gpu, op.copy.direction, op.bytes);
    return;
  }
  const Mirrored<int64_t>& mirrored = mirrors_->copies(rs.job->index, rs.rank, op);
  start_others(mirrored, transport_.host_of(rs.gpu),
               [this, direction = op.copy.direction, bytes = op.bytes](const std::vector<int64_t>& gpus) {
                 transport_.copies(gpus, direction, bytes);
               });
  std::vector<int64_t> gpus{rs.gpu};
  gpus.insert(gpus.end(), mirrored.in_step.begin(), mirrored.in_step.end());
  transport_.copies(gpus, op.copy.direction, op.bytes);
}

void Simulation::send_with_mirrors(const JobState& job, int64_t src, int64_t dst, double bytes) {
  const int64_t src_gpu = job.gpu_of(src);
  const int64_t dst_gpu = job.gpu_of(dst);
  if (!mirrors_) {
    transport_.send(src_gpu, dst_gpu, bytes);
    return;
  }
  const Mirrored<MirrorTraffic::GpuPair>& mirrored = mirrors_->sends(job.index, src, dst, bytes);
  start_others(
      mirrored, transport_.host_of(src_gpu),
      [this, bytes](const std::vector<MirrorTraffic::GpuPair>& pairs) { transport_.sends(pairs, bytes); });
  if (mirrored.in_step.empty()) {
    transport_.send(src_gpu, dst_gpu, bytes);
    return;
  }
  std::vector<MirrorTraffic::GpuPair> pairs{{src_gpu, dst_gpu}};
  pairs.insert(pairs.end(), mirrored.in_step.begin(), mirrored.in_step.end());
  transport_.sends(pairs, bytes);
}

void Simulation::end_iteration(RankState& rs, int iteration, double now) {
  if (window_closed_) return;  // what ends after the window is not an iteration run
  switch (engine::end_iteration(jobs_, *rs.job, iteration, now, options_.iterations, ops_total_)) {
    case AfterIteration::kCloseWindow:
      if (!stopped()) stop_s_ = now;
      window_closed_ = true;
      stop_all();
      return;
    case AfterIteration::kNext:
      rs.begin_iteration(iteration + 1, now);
      return;
    case AfterIteration::kFinished:
      rs.finished = true;
      return;
  }
}

void Simulation::finish_at(RankState& rs, OpId id, int iteration, double start_s, double launch_s,
                           double end_s) {
  rs.record(id, iteration, start_s, launch_s, end_s, options_.iterations);
  if (rs.host) rs.host->finished(id, end_s);
  ++rs.job->ops_executed;
  ++ops_executed_;
  // Before any simcall: notify_all yields to the other actors, which would finish ops of their own
  // first and carry the count past the budget.
  check_budgets(end_s);
  uint32_t ready_streams = 0;  // bit s: an op of stream s became ready
  for (const OpId next : rs.index->successors.of(id)) {
    if (--rs.remaining[next] != 0) continue;
    const Stream stream = rs.graph->op(next).stream;
    if (stream == Stream::kP2p) rs.p2p_ready.push_back(next);
    ready_streams |= 1U << static_cast<unsigned>(stream);
  }
  if (rs.total_done == static_cast<uint64_t>(iteration + 1) * rs.graph->size()) {
    if (iteration + 1 == options_.iterations) rs.run.finish_s = end_s;
    end_iteration(rs, iteration, end_s);
    ready_streams = ~0U;
  }
  if (rs.host) ready_streams = ~0U;  // the host may now issue ops of any stream
  for (size_t s = 0; s < rs.waiter.size(); ++s) {
    if ((ready_streams >> s) & 1U) rs.notify(s);
  }
}

void Simulation::check_budgets(double now_s) {
  if (stopped()) return;
  stopped_by_ = clock_->after_op(ops_executed_, ops_total_, now_s);
  if (stopped_by_.empty()) return;
  stop_s_ = now_s;
  stopped_after_ops_ = ops_executed_;
  stop_all();
}

void Simulation::stop_all() {
  for (RankState& rs : states_) rs.notify_all();
  for (JobState& job : jobs_) {
    for (auto& [key, instance] : job.collectives) instance.notify_all();
  }
}

double Simulation::run_collective(RankState& rs, const Op& op, int iteration) {
  JobState& job = *rs.job;
  const workload::GroupId g = rs.renaming.group(op.collective.group);
  const auto key = std::make_tuple(static_cast<int>(g.kind), g.index, op.collective.seq, iteration);
  const GroupInfo& info = group(job, g);
  CollectiveInstance& instance = job.collectives[key];
  if (instance.members.empty()) instance.expected = info.simulated;
  // The collective occupies every member from its arrival (NCCL's kernel is resident while it
  // waits for its peers) to the end of the transfer. The last arrival runs the transfer and releases
  // every member at its end, so that all members stop slowing kernels at the same instant.
  instance.members.push_back(&rs);
  rs.collectives_in_flight.change(1, sg4::Engine::get_clock());
  if (static_cast<int>(instance.members.size()) == instance.expected) {
    instance.launch_s = sg4::Engine::get_clock();
    const std::vector<sg4::ActorPtr> mirrors = start_mirrored_collectives(rs, g, op);
    transport_.collective(op.collective.kind, info.gpus, op.bytes);
    join(mirrors);
    for (RankState* member : instance.members)
      member->collectives_in_flight.change(-1, sg4::Engine::get_clock());
    instance.done = true;
    instance.notify_all();
  } else {
    while (!instance.done && !stopped()) {
      instance.waiting.emplace_back(sg4::Actor::self());
      sg4::this_actor::suspend();
    }
  }
  const double launch = instance.launch_s;
  if (++instance.left == instance.expected) job.collectives.erase(key);
  return launch;
}

void Simulation::transfer_async(RankState* sender, OpId send, double send_issued, RankState* receiver,
                                OpId recv, double recv_issued, int64_t src, int64_t dst, double bytes,
                                int iteration) {
  const JobState& job = sender != nullptr ? *sender->job : *receiver->job;
  sg4::Actor::create("p2p", transport_.host_of(job.gpu_of(src)), [=, this, &job] {
    const double launch = sg4::Engine::get_clock();
    send_with_mirrors(job, src, dst, bytes);
    if (sender != nullptr) finish(*sender, send, iteration, send_issued, launch);
    if (receiver != nullptr) finish(*receiver, recv, iteration, recv_issued, launch);
    // A mirrored receive waiting for this (unsimulated peer's) send.
    if (sender != nullptr && receiver == nullptr) {
      const auto key = std::make_pair(sender->graph->op(send).p2p.tag, iteration);
      const auto waiting = sender->mirror_recv_waiting.find(key);
      if (waiting != sender->mirror_recv_waiting.end()) {
        finish(*sender, waiting->second.first, iteration, waiting->second.second, launch);
        sender->mirror_recv_waiting.erase(waiting);
      } else {
        sender->mirror_send_done.insert(key);
      }
    }
  });
}

void Simulation::start_p2p(RankState& rs, OpId id, int iteration) {
  const Op& op = rs.graph->op(id);
  const bool is_send = op.kind == OpKind::kSend;
  const int64_t peer = rs.renaming.peer(op.p2p.peer);
  const int64_t src = is_send ? rs.rank : peer;
  const int64_t dst = is_send ? peer : rs.rank;
  const double now = sg4::Engine::get_clock();
  if (rs.job->simulated(peer) != nullptr) {
    const auto met = rs.job->p2p.arrive(src, dst, op.p2p.tag, iteration, is_send, {&rs, id, now});
    if (met) {
      transfer_async(met->send.rank, met->send.op, met->send.issued_s, met->recv.rank, met->recv.op,
                     met->recv.issued_s, src, dst, op.bytes, iteration);
    }
    return;
  }
  if (is_send) {  // to an unsimulated mirror of a simulated rank: the network still carries it
    transfer_async(&rs, id, now, nullptr, workload::kNoOp, 0, src, dst, op.bytes, iteration);
    return;
  }
  // A receive from an unsimulated peer completes with this rank's own send of the same tag: by
  // symmetry the peer sends to us exactly when we send to our other neighbour.
  const auto key = std::make_pair(op.p2p.tag, iteration);
  if (!rs.index->send_tags.contains(op.p2p.tag)) {
    finish(rs, id, iteration, now, now);  // nothing mirrors it: the peer is taken to be on time
    return;
  }
  if (rs.mirror_send_done.erase(key) != 0) {
    finish(rs, id, iteration, now, now);
  } else {
    rs.mirror_recv_waiting[key] = {id, now};
  }
}

void Simulation::run_op(RankState& rs, OpId id, int iteration) {
  const Op& op = rs.graph->op(id);
  const double start = sg4::Engine::get_clock();
  double launch = start;
  switch (op.kind) {
    case OpKind::kGemm:
    case OpKind::kAttentionForward:
    case OpKind::kAttentionBackward:
    case OpKind::kMemory:
    case OpKind::kOptimizerStep: {
      std::unique_lock<sg4::Mutex> gpu;
      if (rs.gpu_lock) {
        gpu = std::unique_lock<sg4::Mutex>(*rs.gpu_lock);
        launch = sg4::Engine::get_clock();
      }
      // Whether a collective slows it is known once every event of its start instant has happened,
      // in whatever order the actors ran them: it runs its unslowed time, then asks.
      sg4::this_actor::sleep_for((*rs.duration)[id]);
      if (const std::optional<double> end = slowed_end_s(rs, id, launch)) sg4::this_actor::sleep_until(*end);
      break;
    }
    case OpKind::kHostSync:
      sg4::this_actor::sleep_for((*rs.duration)[id]);
      break;
    case OpKind::kAlloc:
    case OpKind::kFree:
      rs.memory.apply(op, sg4::Engine::get_clock());
      break;
    case OpKind::kStreamWait:  // ordering only: its predecessors are done
      break;
    case OpKind::kCopy:
      copy_with_mirrors(rs, op);
      break;
    case OpKind::kCollective:
      launch = run_collective(rs, op, iteration);
      break;
    case OpKind::kSend:
    case OpKind::kRecv:
      start_p2p(rs, id, iteration);
      return;  // finished by the transfer (or its mirror)
  }
  finish(rs, id, iteration, start, launch);
}

std::optional<double> Simulation::slowed_end_s(RankState& rs, OpId id, double launch_s) {
  const cost::ComputeModel& compute = *rs.job->input->compute;
  // (Asked even without a slowdown: asking forgets what came before, which bounds its history.)
  if (!rs.collectives_in_flight.after_instant(launch_s) || compute.comm_compute_slowdown() <= 0) {
    return std::nullopt;
  }
  return launch_s + cost::kernel_time_s((*rs.duration)[id], true, compute);
}

size_t Simulation::kernel_run_end(const RankState& rs, const std::vector<OpId>& ops, size_t first) const {
  if (rs.gpu_lock || rs.host || options_.max_events > 0) return first;
  const std::vector<double>& duration = *rs.duration;
  size_t last = first;
  while (last + 1 < ops.size() && rs.index->runs_into_next[ops[last]] != 0 &&
         rs.remaining[ops[last + 1]] == 1 && duration[ops[last]] > 0 && duration[ops[last + 1]] > 0) {
    ++last;
  }
  return last;
}

void Simulation::run_kernels(RankState& rs, const std::vector<OpId>& ops, size_t first, size_t last,
                             int iteration) {
  const std::vector<double>& duration = *rs.duration;
  // The run's end when no kernel from ops[i] on is slowed and ops[i] launches at `launch_s`.
  const auto unslowed_end = [&](double launch_s, size_t i) {
    for (; i <= last; ++i) launch_s += duration[ops[i]];
    return launch_s;
  };
  double launch = sg4::Engine::get_clock();
  sg4::this_actor::sleep_until(unslowed_end(launch, first));
  for (size_t i = first;; ++i) {
    const OpId id = ops[i];
    double end = launch + duration[id];
    if (const std::optional<double> slowed = slowed_end_s(rs, id, launch)) {
      end = *slowed;
      sg4::this_actor::sleep_until(unslowed_end(end, i + 1));
    }
    if (i == last) {
      finish(rs, id, iteration, launch, launch);
      return;
    }
    finish_at(rs, id, iteration, launch, launch, end);
    if (stopped() && stop_s_ <= end) return;  // the later kernels never started
    launch = end;
  }
}

bool Simulation::wait_for_start(const RankState& rs) {
  const double start_s = rs.job->input->start_s;
  if (start_s > 0) sg4::this_actor::sleep_until(start_s);
  return !stopped();
}

template <class Ready>
bool Simulation::wait_until(RankState& rs, Stream stream, Ready ready) {
  if (stopped() || ready()) return !stopped();
  const auto s = static_cast<size_t>(stream);
  while (!stopped() && !ready()) {
    rs.waiter[s] = sg4::Actor::self();
    sg4::this_actor::suspend();
  }
  return !stopped();
}

bool Simulation::wait_for_host(RankState& rs, OpId id) {
  if (!rs.host) return true;
  std::optional<double> issued;
  if (!wait_until(rs, rs.graph->op(id).stream, [&] { return (issued = rs.host->issue_s(id)).has_value(); })) {
    return false;
  }
  if (*issued > sg4::Engine::get_clock()) sg4::this_actor::sleep_until(*issued);
  return !stopped();
}

bool Simulation::wait_for_next_iteration(RankState& rs, Stream stream, int iteration) {
  return wait_until(rs, stream, [&] { return rs.finished || rs.iteration != iteration; }) && !rs.finished;
}

void Simulation::stream_actor(RankState& rs, Stream stream) {
  if (!wait_for_start(rs)) return;
  const std::vector<OpId>& ops = rs.index->stream_ops[static_cast<size_t>(stream)];
  for (int iteration = 0;; ++iteration) {
    for (size_t k = 0; k < ops.size(); ++k) {
      const OpId id = ops[k];
      if (!wait_until(rs, stream, [&] { return rs.iteration == iteration && rs.remaining[id] == 0; }) ||
          !wait_for_host(rs, id)) {
        return;
      }
      const size_t last = kernel_run_end(rs, ops, k);
      if (last == k) {
        run_op(rs, id, iteration);
      } else {
        run_kernels(rs, ops, k, last, iteration);
        k = last;
      }
    }
    if (!wait_for_next_iteration(rs, stream, iteration)) return;
  }
}

// Sends and receives are not ordered among themselves (NCCL groups them): each starts as soon as its
// predecessors are done.
void Simulation::p2p_actor(RankState& rs) {
  if (!wait_for_start(rs)) return;
  const size_t per_iteration = rs.index->stream_ops[static_cast<size_t>(Stream::kP2p)].size();
  for (int iteration = 0;; ++iteration) {
    for (size_t started = 0; started < per_iteration;) {
      if (!wait_until(rs, Stream::kP2p, [&] { return rs.iteration == iteration && !rs.p2p_ready.empty(); })) {
        return;
      }
      const std::vector<OpId> batch(rs.p2p_ready.begin(), rs.p2p_ready.end());
      rs.p2p_ready.clear();
      for (const OpId id : batch) {
        if (!wait_for_host(rs, id)) return;
        const OpKind kind = rs.graph->op(id).kind;
        if (kind == OpKind::kSend || kind == OpKind::kRecv) {
          start_p2p(rs, id, iteration);
        } else {
          run_op(rs, id, iteration);  // bookkeeping on the stream (buffer allocation/free): instantaneous
        }
      }
      started += batch.size();
    }
    if (!wait_for_next_iteration(rs, Stream::kP2p, iteration)) return;
  }
}

std::vector<EngineResult> Simulation::run() {
  xbt_log_control_set("root.thres:warning");
  sg4::Engine engine("trainsim");
  sg4::Engine::set_config("network/model:CM02");
  sg4::Engine::set_config("network/crosstraffic:0");
  sg4::Engine::set_config("network/TCP-gamma:1e15");
  sg4::Engine::set_config("contexts/stack-size:1024");
  transport_.build_platform();
  if (options_.mirror != MirrorMode::kNone) mirrors_.emplace(inputs_, transport_, options_.mirror);
  clock_.emplace(options_);

  ops_total_ = set_up_jobs(inputs_, options_.iterations, jobs_, states_, [](RankState& rs) {
    if (rs.index->two_lanes) rs.gpu_lock = sg4::Mutex::create();
  });
  for (RankState& rs : states_) {
    const std::string job = jobs_.size() > 1 ? fmt::format("job{}-", rs.job->index) : "";
    for (size_t s = 0; s < rs.index->stream_ops.size(); ++s) {
      if (rs.index->stream_ops[s].empty()) continue;
      const auto stream = static_cast<Stream>(s);
      sg4::Actor::create(fmt::format("{}rank{}-{}", job, rs.rank, workload::to_string(stream)),
                         transport_.host_of(rs.gpu), [this, &rs, stream] {
                           if (stream == Stream::kP2p) {
                             p2p_actor(rs);
                           } else {
                             stream_actor(rs, stream);
                           }
                         });
    }
  }
  engine.run();

  if (!stopped_by_.empty()) throw BudgetExceededError(stopped_by_, stop_s_, stopped_after_ops_, ops_total_);
  std::vector<const RankProgress*> ranks(states_.size());
  for (size_t i = 0; i < states_.size(); ++i) ranks[i] = &states_[i];
  if (!window_closed_) throw_if_unfinished(ranks, jobs_.size() > 1, sg4::Engine::get_clock());
  std::vector<EngineResult> results;
  for (JobState& job : jobs_) {
    results.push_back(job.result(options_.iterations));
    if (mirrors_) {
      results.back().mirrors_found = mirrors_->candidates();
      results.back().mirrors_played = mirrors_->played();
    }
  }
  return results;
}

}  // namespace

EngineResult simulate(const workload::ParallelPlan& plan, const std::vector<int64_t>& ranks,
                      const std::vector<const Graph*>& graphs, Transport& transport,
                      const cost::ComputeModel& compute, const EngineOptions& options) {
  const std::vector<Job> jobs{Job{&plan, ranks, graphs, &compute, options.compute_speed, {}, 0}};
  const JobsOptions limits{options.iterations, options.max_events, options.time_limit_s, options.mirror,
                           options.progress};
  return std::move(simulate_jobs(jobs, transport, limits).front());
}

std::vector<EngineResult> simulate_jobs(const std::vector<Job>& jobs, Transport& transport,
                                        const JobsOptions& options) {
  Simulation simulation(jobs, transport, options);
  return simulation.run();
}

}  // namespace trainsim::engine
