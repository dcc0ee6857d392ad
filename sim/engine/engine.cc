#include "sim/engine/engine.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <set>
#include <tuple>
#include <xbt/log.h>

#include <fmt/format.h>
#include <simgrid/s4u.hpp>

#include "sim/cost/op_cost.h"
#include "sim/cost/rank_schedule.h"

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

// The wall clock is read once every this many ops (reading it costs more than most ops).
constexpr uint64_t kClockCheckOps = 256;

struct JobState;

struct RankState {
  JobState* job = nullptr;
  int64_t rank = 0;  // in the job's plan
  int64_t gpu = 0;   // the transport's
  const Graph* graph = nullptr;
  std::vector<double> duration;
  std::vector<int32_t> done;  // iterations in which the op has finished
  std::vector<uint32_t> pred_count;
  std::vector<uint32_t> remaining;  // unfinished predecessors in the current iteration
  Graph::Successors successors;
  std::array<std::vector<OpId>, workload::kStreamCount> stream_ops;
  std::vector<OpId> p2p_ready;  // sends/receives whose predecessors are done, not yet started
  int iteration = 0;            // the iteration in progress
  bool finished = false;        // done with the job's last iteration
  uint64_t total_done = 0;
  int comm_busy = 0;  // collectives in progress on this rank
  cost::MemoryTracker memory{true};
  std::optional<cost::HostDispatch> host;  // when the stack gives a host dispatch time
  sg4::ConditionVariablePtr cv;
  // The GPU, when two lanes hold kernels (workload::Stream::kCompute2): one kernel at a time, in the
  // order they became ready (SimGrid's mutexes are FIFO).
  sg4::MutexPtr gpu_lock;
  RankRun run;
  // Mirror matching of receives from unsimulated peers, by tag: this rank's sends and receives.
  std::set<int64_t> send_tags;
  std::set<std::pair<int64_t, int>> mirror_send_done;  // (tag, iteration) of sends already complete
  std::map<std::pair<int64_t, int>, std::pair<OpId, double>> mirror_recv_waiting;
};

struct CollectiveInstance {
  int expected = 0;
  int left = 0;
  bool done = false;
  double launch_s = 0;
  std::vector<RankState*> members;  // the simulated members that have arrived
  sg4::ConditionVariablePtr cv;
};

struct P2pEnd {
  RankState* rank = nullptr;
  OpId op = workload::kNoOp;
  double issued_s = 0;
};

struct P2pInstance {
  P2pEnd send;
  P2pEnd recv;
};

struct GroupInfo {
  std::vector<int64_t> gpus;  // the members' GPUs
  int simulated = 0;
};

// A job in progress: its ranks, the collectives and transfers under way among them, and how many
// iterations it runs.
struct JobState {
  const Job* input = nullptr;
  size_t index = 0;
  std::map<int64_t, RankState*> ranks;
  size_t ranks_with_ops = 0;  // those whose graph is not empty: they end iterations
  std::map<std::tuple<int, int32_t, int32_t, int>, CollectiveInstance> collectives;
  std::map<std::tuple<int64_t, int64_t, int64_t, int>, P2pInstance> p2p;
  std::map<std::pair<int, int32_t>, GroupInfo> groups;
  int planned = 0;                      // iterations it will run (grows while other jobs need it)
  int completed = 0;                    // iterations every simulated rank has finished
  std::vector<size_t> ranks_done;       // per iteration: simulated ranks that have finished it
  std::vector<double> iteration_end_s;  // per iteration: when its last simulated rank finished it
  uint64_t ops_per_iteration = 0;
  uint64_t ops_executed = 0;

  int64_t gpu_of(int64_t rank) const { return input->gpu_of(rank); }
  RankState* state_of(int64_t rank) const {
    const auto it = ranks.find(rank);
    return it == ranks.end() ? nullptr : it->second;
  }
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
  // Blocks until the host has issued op `id` (cost::HostDispatch); returns whether the simulation
  // goes on.
  bool wait_for_host(RankState& rs, OpId id);
  // Blocks until `rs` has finished `iteration`; returns whether it runs another.
  bool wait_for_next_iteration(RankState& rs, int iteration);
  void begin_iteration(RankState& rs, int iteration);
  // `rs` has just finished `iteration`: the job's bookkeeping, and the next iteration if it runs one.
  void end_iteration(RankState& rs, int iteration, double now);
  // Whether some job other than `job` has not yet run the requested iterations.
  bool others_need(const JobState& job) const;
  void run_op(RankState& rs, OpId id, int iteration);
  // Marks `id` finished now; it was issued at `start_s` and its work began at `launch_s`.
  void finish(RankState& rs, OpId id, int iteration, double start_s, double launch_s);
  // Returns when the collective began (all simulated members arrived).
  double run_collective(RankState& rs, const Op& op, int iteration);
  void start_p2p(RankState& rs, OpId id, int iteration);
  void transfer_async(RankState* sender, OpId send, double send_issued, RankState* receiver, OpId recv,
                      double recv_issued, int64_t src, int64_t dst, double bytes, int iteration);
  const GroupInfo& group(JobState& job, workload::GroupId id);
  std::string describe_blocked() const;
  // Stops the simulation when a budget of the options is exhausted.
  void check_budgets();
  // Ops in progress complete, no new op starts, and every waiting actor is woken to return.
  void stop_all();
  bool stopped() const { return !stopped_by_.empty() || window_closed_; }
  EngineResult result_of(JobState& job);

  const std::vector<Job>& inputs_;
  Transport& transport_;
  const JobsOptions& options_;
  std::vector<JobState> jobs_;
  std::vector<RankState> states_;  // every job's, job by job
  sg4::MutexPtr mutex_;
  uint64_t ops_executed_ = 0;
  uint64_t ops_total_ = 0;  // all ranks and the iterations planned so far
  std::chrono::steady_clock::time_point started_;
  std::string stopped_by_;  // the budget that stopped the simulation, empty while none has
  // Every job of a run of several has run the requested iterations: what the others still run does
  // not count, so the simulation ends.
  bool window_closed_ = false;
  double stopped_at_s_ = 0;
  uint64_t stopped_after_ops_ = 0;
};

const GroupInfo& Simulation::group(JobState& job, workload::GroupId id) {
  const auto key = std::make_pair(static_cast<int>(id.kind), id.index);
  auto it = job.groups.find(key);
  if (it == job.groups.end()) {
    GroupInfo info;
    for (const int64_t m : job.input->plan->members(id)) {
      info.gpus.push_back(job.gpu_of(m));
      info.simulated += job.ranks.count(m) != 0 ? 1 : 0;
    }
    it = job.groups.emplace(key, std::move(info)).first;
  }
  return it->second;
}

void Simulation::begin_iteration(RankState& rs, int iteration) {
  rs.iteration = iteration;
  rs.remaining = rs.pred_count;
  if (rs.host) rs.host->begin_iteration(iteration == 0 ? rs.job->input->start_s : sg4::Engine::get_clock());
  for (const OpId id : rs.stream_ops[static_cast<size_t>(Stream::kP2p)]) {
    if (rs.pred_count[id] == 0) rs.p2p_ready.push_back(id);
  }
}

bool Simulation::others_need(const JobState& job) const {
  return std::any_of(jobs_.begin(), jobs_.end(), [&](const JobState& other) {
    return &other != &job && other.completed < options_.iterations;
  });
}

void Simulation::end_iteration(RankState& rs, int iteration, double now) {
  if (window_closed_) return;  // what ends after the window is not an iteration run
  JobState& job = *rs.job;
  const auto i = static_cast<size_t>(iteration);
  if (job.iteration_end_s.size() <= i) {
    job.iteration_end_s.resize(i + 1, 0.0);
    job.ranks_done.resize(i + 1, 0);
  }
  job.iteration_end_s[i] = std::max(job.iteration_end_s[i], now);
  if (++job.ranks_done[i] == job.ranks_with_ops) {
    job.completed = iteration + 1;
    if (jobs_.size() > 1 && job.completed >= options_.iterations && !others_need(job)) {
      window_closed_ = true;
      stop_all();
    }
  }
  // The first of the job's ranks to get past its last planned iteration decides, for all of them,
  // whether it runs another: it does while some other job still needs the company.
  if (job.planned == iteration + 1 && iteration + 1 >= options_.iterations && others_need(job)) {
    ++job.planned;
    ops_total_ += job.ops_per_iteration;
  }
  if (iteration + 1 < job.planned) {
    begin_iteration(rs, iteration + 1);
  } else {
    rs.finished = true;
  }
}

void Simulation::finish(RankState& rs, OpId id, int iteration, double start_s, double launch_s) {
  const double now = sg4::Engine::get_clock();
  if (iteration < options_.iterations) {
    rs.run.start_s[id] = start_s;
    rs.run.launch_s[id] = launch_s;
    rs.run.end_s[id] = now;
  }
  rs.done[id] = iteration + 1;
  ++rs.total_done;
  if (rs.host) rs.host->finished(id, now);
  ++rs.job->ops_executed;
  ++ops_executed_;
  // Before any simcall: notify_all yields to the other actors, which would finish ops of their own
  // first and carry the count past the budget.
  check_budgets();
  for (const OpId next : rs.successors.of(id)) {
    if (--rs.remaining[next] == 0 && rs.graph->op(next).stream == Stream::kP2p) rs.p2p_ready.push_back(next);
  }
  if (rs.total_done == static_cast<uint64_t>(iteration + 1) * rs.graph->size()) {
    if (iteration + 1 == options_.iterations) rs.run.finish_s = now;
    end_iteration(rs, iteration, now);
  }
  rs.cv->notify_all();
}

void Simulation::check_budgets() {
  if (stopped() || ops_executed_ >= ops_total_) return;
  if (options_.max_events > 0 && ops_executed_ >= options_.max_events) {
    stopped_by_ = "max-events";
  } else if (options_.time_limit_s > 0 && ops_executed_ % kClockCheckOps == 0 &&
             std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count() >
                 options_.time_limit_s) {
    stopped_by_ = "time-limit";
  } else {
    return;
  }
  stopped_at_s_ = sg4::Engine::get_clock();
  stopped_after_ops_ = ops_executed_;
  stop_all();
}

void Simulation::stop_all() {
  for (RankState& rs : states_) rs.cv->notify_all();
  for (JobState& job : jobs_) {
    for (auto& [key, instance] : job.collectives) instance.cv->notify_all();
  }
}

double Simulation::run_collective(RankState& rs, const Op& op, int iteration) {
  JobState& job = *rs.job;
  const workload::GroupId g = op.collective.group;
  const auto key = std::make_tuple(static_cast<int>(g.kind), g.index, op.collective.seq, iteration);
  const GroupInfo& info = group(job, g);
  CollectiveInstance& instance = job.collectives[key];
  if (!instance.cv) {
    instance.cv = sg4::ConditionVariable::create();
    instance.expected = info.simulated;
  }
  // The collective occupies every member from its arrival (NCCL's kernel is resident while it
  // waits for its peers) to the end of the transfer. The last arrival runs the transfer and releases
  // every member at its end, so that all members stop slowing kernels at the same instant.
  instance.members.push_back(&rs);
  ++rs.comm_busy;
  if (static_cast<int>(instance.members.size()) == instance.expected) {
    instance.launch_s = sg4::Engine::get_clock();
    transport_.collective(op.collective.kind, info.gpus, op.bytes);
    for (RankState* member : instance.members) --member->comm_busy;
    instance.done = true;
    instance.cv->notify_all();
  } else {
    std::unique_lock<sg4::Mutex> lock(*mutex_);
    while (!instance.done && !stopped()) instance.cv->wait(lock);
  }
  const double launch = instance.launch_s;
  if (++instance.left == instance.expected) job.collectives.erase(key);
  return launch;
}

void Simulation::transfer_async(RankState* sender, OpId send, double send_issued, RankState* receiver,
                                OpId recv, double recv_issued, int64_t src, int64_t dst, double bytes,
                                int iteration) {
  const JobState& job = sender != nullptr ? *sender->job : *receiver->job;
  const int64_t src_gpu = job.gpu_of(src);
  const int64_t dst_gpu = job.gpu_of(dst);
  sg4::Actor::create("p2p", transport_.host_of(src_gpu), [=, this] {
    const double launch = sg4::Engine::get_clock();
    transport_.send(src_gpu, dst_gpu, bytes);
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
  const int64_t peer = op.p2p.peer;
  const int64_t src = is_send ? rs.rank : peer;
  const int64_t dst = is_send ? peer : rs.rank;
  const double now = sg4::Engine::get_clock();
  RankState* peer_state = rs.job->state_of(peer);
  if (peer_state != nullptr) {
    const auto key = std::make_tuple(src, dst, op.p2p.tag, iteration);
    P2pInstance& instance = rs.job->p2p[key];
    (is_send ? instance.send : instance.recv) = {&rs, id, now};
    if (instance.send.rank != nullptr && instance.recv.rank != nullptr) {
      const P2pInstance pair = instance;
      rs.job->p2p.erase(key);
      transfer_async(pair.send.rank, pair.send.op, pair.send.issued_s, pair.recv.rank, pair.recv.op,
                     pair.recv.issued_s, src, dst, op.bytes, iteration);
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
  if (rs.send_tags.count(op.p2p.tag) == 0) {
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
      const cost::ComputeModel& compute = *rs.job->input->compute;
      if (compute.comm_compute_slowdown() > 0) {
        // Let the streams whose work became ready at this instant (a collective issued together with
        // this kernel, one ending now) update comm_busy first: the slowdown then does not depend on
        // the order in which simultaneous events happen to be processed, which differs between
        // collapsed and full runs.
        sg4::this_actor::yield();
      }
      sg4::this_actor::sleep_for(cost::kernel_time_s(rs.duration[id], rs.comm_busy > 0, compute));
      break;
    }
    case OpKind::kHostSync:
      sg4::this_actor::sleep_for(rs.duration[id]);
      break;
    case OpKind::kAlloc:
    case OpKind::kFree:
      rs.memory.apply(op, sg4::Engine::get_clock());
      break;
    case OpKind::kStreamWait:  // ordering only: its predecessors are done
      break;
    case OpKind::kCopy:
      transport_.copy(rs.gpu, op.copy.direction, op.bytes);
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

bool Simulation::wait_for_start(const RankState& rs) {
  const double start_s = rs.job->input->start_s;
  if (start_s > 0) sg4::this_actor::sleep_until(start_s);
  return !stopped();
}

bool Simulation::wait_for_host(RankState& rs, OpId id) {
  if (!rs.host) return true;
  std::optional<double> issued;
  {
    std::unique_lock<sg4::Mutex> lock(*mutex_);
    while (!stopped() && !(issued = rs.host->issue_s(id))) rs.cv->wait(lock);
  }
  if (!stopped() && *issued > sg4::Engine::get_clock()) sg4::this_actor::sleep_until(*issued);
  return !stopped();
}

bool Simulation::wait_for_next_iteration(RankState& rs, int iteration) {
  std::unique_lock<sg4::Mutex> lock(*mutex_);
  while (!stopped() && !rs.finished && rs.iteration == iteration) rs.cv->wait(lock);
  return !stopped() && !rs.finished;
}

void Simulation::stream_actor(RankState& rs, Stream stream) {
  if (!wait_for_start(rs)) return;
  for (int iteration = 0;; ++iteration) {
    for (const OpId id : rs.stream_ops[static_cast<size_t>(stream)]) {
      {
        std::unique_lock<sg4::Mutex> lock(*mutex_);
        while (!stopped() && (rs.iteration != iteration || rs.remaining[id] != 0)) rs.cv->wait(lock);
      }
      if (stopped() || !wait_for_host(rs, id)) return;
      run_op(rs, id, iteration);
    }
    if (!wait_for_next_iteration(rs, iteration)) return;
  }
}

// Sends and receives are not ordered among themselves (NCCL groups them): each starts as soon as its
// predecessors are done.
void Simulation::p2p_actor(RankState& rs) {
  if (!wait_for_start(rs)) return;
  const size_t per_iteration = rs.stream_ops[static_cast<size_t>(Stream::kP2p)].size();
  for (int iteration = 0;; ++iteration) {
    for (size_t started = 0; started < per_iteration;) {
      {
        std::unique_lock<sg4::Mutex> lock(*mutex_);
        while (!stopped() && (rs.iteration != iteration || rs.p2p_ready.empty())) rs.cv->wait(lock);
      }
      if (stopped()) return;
      std::vector<OpId> batch;
      batch.swap(rs.p2p_ready);
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
    if (!wait_for_next_iteration(rs, iteration)) return;
  }
}

std::string Simulation::describe_blocked() const {
  std::string out;
  int shown = 0;
  for (const RankState& rs : states_) {
    const int iteration = static_cast<int>(rs.total_done / std::max<size_t>(1, rs.graph->size()));
    const std::string job = jobs_.size() > 1 ? fmt::format("job {} ", rs.job->index) : "";
    for (size_t s = 0; s < rs.stream_ops.size(); ++s) {
      for (const OpId id : rs.stream_ops[s]) {
        if (rs.done[id] > iteration) continue;
        const Op& op = rs.graph->op(id);
        std::string what =
            fmt::format("{}rank {} stream {}: op {} ({} {}, layer {}, micro-batch {})", job, rs.rank,
                        workload::to_string(static_cast<Stream>(s)), id, workload::to_string(op.kind),
                        workload::to_string(op.label), op.layer, op.micro_batch);
        if (op.kind == OpKind::kCollective) {
          what += fmt::format(" on group {} {} (#{})", workload::to_string(op.collective.group.kind),
                              op.collective.group.index, op.collective.seq);
        } else if (op.kind == OpKind::kSend || op.kind == OpKind::kRecv) {
          what += fmt::format(" with rank {} tag {}", op.p2p.peer, op.p2p.tag);
        }
        out += "\n  " + what;
        if (++shown == 12) return out + "\n  ...";
        break;  // the first unfinished op of each stream is the one that waits
      }
    }
  }
  return out;
}

EngineResult Simulation::result_of(JobState& job) {
  EngineResult result;
  std::vector<double>& ends = job.iteration_end_s;
  ends.resize(static_cast<size_t>(job.completed));  // an iteration cut short by the window's close: not run
  const auto last = static_cast<size_t>(options_.iterations - 1);
  result.total_time_s = ends[last];
  result.iteration_time_s = ends[last] - (last > 0 ? ends[last - 1] : job.input->start_s);
  result.iteration_end_s = ends;
  result.ops_executed = job.ops_executed;
  double latest = -1;
  for (const auto& [rank, rs] : job.ranks) {
    if (rs->run.finish_s > latest) {
      latest = rs->run.finish_s;
      result.critical_rank = rank;
    }
    rs->run.peak_hbm_bytes = rs->memory.peak_hbm_bytes();
    rs->run.hbm_at_peak_bytes = rs->memory.hbm_at_peak_bytes();
    rs->run.peak_host_bytes = rs->memory.peak_host_bytes();
    rs->run.hbm_samples = std::move(rs->memory.hbm_samples());
    result.ranks.push_back(std::move(rs->run));
  }
  return result;
}

std::vector<EngineResult> Simulation::run() {
  xbt_log_control_set("root.thres:warning");
  sg4::Engine engine("trainsim");
  sg4::Engine::set_config("network/model:CM02");
  sg4::Engine::set_config("network/crosstraffic:0");
  sg4::Engine::set_config("network/TCP-gamma:1e15");
  sg4::Engine::set_config("contexts/stack-size:1024");
  transport_.build_platform();
  mutex_ = sg4::Mutex::create();
  started_ = std::chrono::steady_clock::now();

  size_t rank_count = 0;
  for (const Job& input : inputs_) {
    if (!input.compute_speed.empty() && input.compute_speed.size() != input.ranks.size()) {
      throw std::invalid_argument(fmt::format("{} compute speeds for {} simulated ranks",
                                              input.compute_speed.size(), input.ranks.size()));
    }
    rank_count += input.ranks.size();
  }
  jobs_.resize(inputs_.size());
  states_.resize(rank_count);
  size_t next_state = 0;
  for (size_t j = 0; j < inputs_.size(); ++j) {
    const Job& input = inputs_[j];
    JobState& job = jobs_[j];
    job.input = &input;
    job.index = j;
    job.planned = options_.iterations;
    for (size_t i = 0; i < input.ranks.size(); ++i) {
      RankState& rs = states_[next_state++];
      rs.job = &job;
      rs.rank = input.ranks[i];
      rs.gpu = job.gpu_of(rs.rank);
      rs.graph = input.graphs[i];
      rs.duration = cost::compute_durations(*rs.graph, *input.compute,
                                            input.compute_speed.empty() ? 1.0 : input.compute_speed[i]);
      rs.done.assign(rs.graph->size(), 0);
      rs.successors = rs.graph->successors();
      rs.pred_count.resize(rs.graph->size());
      for (OpId id = 0; id < rs.graph->size(); ++id) {
        rs.pred_count[id] = static_cast<uint32_t>(rs.graph->predecessors(id).size());
      }
      rs.cv = sg4::ConditionVariable::create();
      rs.run.rank = rs.rank;
      rs.run.symmetry_class = rs.graph->info.symmetry_class;
      rs.run.start_s.assign(rs.graph->size(), 0.0);
      rs.run.end_s.assign(rs.graph->size(), 0.0);
      rs.run.launch_s.assign(rs.graph->size(), 0.0);
      for (OpId id = 0; id < rs.graph->size(); ++id) {
        const Op& op = rs.graph->op(id);
        rs.stream_ops[static_cast<size_t>(op.stream)].push_back(id);
        if (op.kind == OpKind::kSend) rs.send_tags.insert(op.p2p.tag);
      }
      if (cost::has_two_lanes(*rs.graph)) rs.gpu_lock = sg4::Mutex::create();
      if (input.compute->host_dispatch_s() > 0) rs.host.emplace(*rs.graph, input.compute->host_dispatch_s());
      job.ranks.emplace(rs.rank, &rs);
      job.ranks_with_ops += rs.graph->size() > 0 ? 1 : 0;
      job.ops_per_iteration += rs.graph->size();
      begin_iteration(rs, 0);
    }
    ops_total_ += static_cast<uint64_t>(options_.iterations) * job.ops_per_iteration;
    if (job.ranks_with_ops == 0) {  // nothing to run: done from the start
      job.completed = options_.iterations;
      job.iteration_end_s.assign(static_cast<size_t>(options_.iterations), input.start_s);
    }
  }
  for (RankState& rs : states_) {
    const std::string job = jobs_.size() > 1 ? fmt::format("job{}-", rs.job->index) : "";
    for (size_t s = 0; s < rs.stream_ops.size(); ++s) {
      if (rs.stream_ops[s].empty()) continue;
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

  if (!stopped_by_.empty())
    throw BudgetExceededError(stopped_by_, stopped_at_s_, stopped_after_ops_, ops_total_);
  for (const RankState& rs : states_) {
    if (!window_closed_ && rs.total_done != static_cast<uint64_t>(rs.job->planned) * rs.graph->size()) {
      throw DeadlockError(
          fmt::format("the simulation stopped at t = {:.6f} s with ops that can never run (a "
                      "receive without its send, or a collective a member never enters):{}",
                      sg4::Engine::get_clock(), describe_blocked()));
    }
  }
  std::vector<EngineResult> results;
  for (JobState& job : jobs_) results.push_back(result_of(job));
  return results;
}

}  // namespace

EngineResult simulate(const workload::ParallelPlan& plan, const std::vector<int64_t>& ranks,
                      const std::vector<const Graph*>& graphs, Transport& transport,
                      const cost::ComputeModel& compute, const EngineOptions& options) {
  const std::vector<Job> jobs{Job{&plan, ranks, graphs, &compute, options.compute_speed, {}, 0}};
  const JobsOptions limits{options.iterations, options.max_events, options.time_limit_s};
  return std::move(simulate_jobs(jobs, transport, limits).front());
}

std::vector<EngineResult> simulate_jobs(const std::vector<Job>& jobs, Transport& transport,
                                        const JobsOptions& options) {
  Simulation simulation(jobs, transport, options);
  return simulation.run();
}

}  // namespace trainsim::engine
