// The bookkeeping both engines keep (the SimGrid one, engine.cc, and the ideal network's event loop,
// ideal_engine.cc): how far each simulated rank is through its graph and iterations, what each job
// has completed, the budgets, the deadlock report and the results. Internal to sim/engine; free of
// SimGrid.
#ifndef TRAINSIM_SIM_ENGINE_RANK_PROGRESS_H_
#define TRAINSIM_SIM_ENGINE_RANK_PROGRESS_H_

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "sim/cost/rank_schedule.h"
#include "sim/engine/engine.h"
#include "sim/workload/renaming.h"

namespace trainsim::engine {

// The wall clock is read once every this many ops (reading it costs more than most ops).
constexpr uint64_t kClockCheckOps = 256;

// One collective call of a job: its group (kind, index), its sequence number in the group and the
// iteration.
using CollectiveKey = std::tuple<int, int32_t, int32_t, int>;

struct JobProgress;

// What every rank that runs one graph shares: each op's predecessor count and successors, each
// stream's ops in graph order, the tags of the graph's sends, whether its kernels take two lanes.
struct GraphIndex {
  explicit GraphIndex(const workload::Graph& graph);

  std::vector<uint32_t> pred_count;
  workload::Graph::Successors successors;
  std::array<std::vector<workload::OpId>, workload::kStreamCount> stream_ops;
  std::set<int64_t> send_tags;
  bool two_lanes = false;  // kernels on two lanes take the GPU in turns (cost::has_two_lanes)
  // Per op: 1 when it is a kernel (workload::is_kernel) whose only successor is the next op of its
  // stream, itself a kernel. Such a run of kernels goes through the GPU back to back once the first
  // starts, if nothing else holds the later ones back.
  std::vector<uint8_t> runs_into_next;
};

// One simulated rank: its graph and op prices, what has finished, the memory and host it runs with.
struct RankProgress {
  JobProgress* owner = nullptr;
  int64_t rank = 0;  // in the job's plan
  int64_t gpu = 0;   // the transport's
  const workload::Graph* graph = nullptr;
  workload::Renaming renaming;                    // from the rank the graph was built for to this one
  const GraphIndex* index = nullptr;              // the graph's (shared by the ranks that run it)
  const std::vector<double>* duration = nullptr;  // cost::compute_durations at the rank's speed (shared)
  std::vector<int32_t> done;                      // iterations in which the op has finished
  std::vector<uint32_t> remaining;                // unfinished predecessors in the current iteration
  std::deque<workload::OpId> p2p_ready;  // sends/receives whose predecessors are done, not yet started
  int iteration = 0;                     // the iteration in progress
  bool finished = false;                 // done with the job's last iteration
  uint64_t total_done = 0;
  cost::CollectivesInFlight collectives_in_flight;  // this rank's, for the overlap rule
  cost::MemoryTracker memory{true};
  std::optional<cost::HostDispatch> host;  // when the stack gives a host dispatch time
  RankRun run;
  // Mirror matching of receives from unsimulated peers, by tag (the graph's send tags: index).
  std::set<std::pair<int64_t, int>> mirror_send_done;  // (tag, iteration) of sends already complete
  std::map<std::pair<int64_t, int>, std::pair<workload::OpId, double>> mirror_recv_waiting;

  // Sets up simulated rank `at` (of the job's ranks) of `owner_job` and begins its first iteration.
  void init(JobProgress& owner_job, size_t at);
  // Begins iteration `next` at `now_s`: every op waits for its predecessors again.
  void begin_iteration(int next, double now_s);
  // Op `id` of `iteration` finished at `end_s` (issued at `start_s`, its work begun at `launch_s`);
  // its times are kept for iterations below `iterations`.
  void record(workload::OpId id, int iteration, double start_s, double launch_s, double end_s,
              int iterations);
};

// One end of a message between simulated ranks: the rank (an engine's RankProgress), the send or
// receive op and when it was issued.
template <typename Rank>
struct P2pEnd {
  Rank* rank = nullptr;
  workload::OpId op = workload::kNoOp;
  double issued_s = 0;
};

// Messages between simulated ranks whose first end has arrived: a message starts once its send and
// its receive both have.
template <typename Rank>
class P2pRendezvous {
 public:
  struct Pair {
    P2pEnd<Rank> send;
    P2pEnd<Rank> recv;
  };

  // The send (`is_send`) or receive `end` of the message from `src` to `dst` with `tag` in
  // `iteration` arrives; returns both ends when the other one was waiting.
  std::optional<Pair> arrive(int64_t src, int64_t dst, int64_t tag, int iteration, bool is_send,
                             const P2pEnd<Rank>& end) {
    const auto key = std::make_tuple(src, dst, tag, iteration);
    Pair& pair = waiting_[key];
    (is_send ? pair.send : pair.recv) = end;
    if (pair.send.rank == nullptr || pair.recv.rank == nullptr) return std::nullopt;
    const Pair met = pair;
    waiting_.erase(key);
    return met;
  }

 private:
  std::map<std::tuple<int64_t, int64_t, int64_t, int>, Pair> waiting_;
};

// One job: the iterations it runs and has completed, and when each ended.
struct JobProgress {
  const Job* input = nullptr;
  // What the ranks running one graph (at one speed) share, by graph (and speed).
  std::map<const workload::Graph*, std::unique_ptr<const GraphIndex>> indexes;
  std::map<std::pair<const workload::Graph*, double>, std::unique_ptr<const std::vector<double>>> durations;
  size_t index = 0;
  std::vector<RankProgress*> members;        // its simulated ranks, ascending
  std::map<int64_t, RankProgress*> by_rank;  // the same, by rank in the plan
  size_t ranks_with_ops = 0;                 // those whose graph is not empty: they end iterations
  int planned = 0;                           // iterations it will run (grows while other jobs need it)
  int completed = 0;                         // iterations every simulated rank has finished
  std::vector<size_t> ranks_done;            // per iteration: simulated ranks that have finished it
  std::vector<double> iteration_end_s;       // per iteration: when its last simulated rank finished it
  uint64_t ops_per_iteration = 0;
  uint64_t ops_executed = 0;

  // Job `input` (number `job_index`) set to run `iterations`; throws std::invalid_argument when its
  // speeds do not match its ranks.
  void init(const Job& job_input, size_t job_index, int iterations);
  // Adds simulated rank `rank`, set up by RankProgress::init.
  void add(RankProgress& rank);
  // After the last add: a job with nothing to run is done from its start.
  void begin(int iterations);
  int64_t gpu_of(int64_t rank) const { return input->gpu_of(rank); }
  // Simulated rank `rank`, or nullptr when the run does not simulate it.
  RankProgress* simulated(int64_t rank) const {
    const auto it = by_rank.find(rank);
    return it == by_rank.end() ? nullptr : it->second;
  }
  // A simulated rank finished `iteration` at `now_s`; returns whether that completes it for the job.
  bool count_end(int iteration, double now_s);
  // Its result once the simulation has ended (moves the ranks' runs out).
  EngineResult result(int iterations);
};

// Sets up every job of `inputs` and its simulated ranks in `jobs` and `states` (sized here, so that
// pointers into them stay valid), for `iterations` iterations, calling `prepare(rank)` on each rank
// after RankProgress::init, before its job adds it. Returns the ops the run will execute.
template <typename JobState, typename RankState, typename Prepare>
uint64_t set_up_jobs(const std::vector<Job>& inputs, int iterations, std::vector<JobState>& jobs,
                     std::vector<RankState>& states, const Prepare& prepare) {
  size_t rank_count = 0;
  for (const Job& input : inputs) rank_count += input.ranks.size();
  jobs.resize(inputs.size());
  states.resize(rank_count);
  size_t next_state = 0;
  uint64_t ops_total = 0;
  for (size_t j = 0; j < inputs.size(); ++j) {
    JobState& job = jobs[j];
    job.init(inputs[j], j, iterations);
    for (size_t i = 0; i < inputs[j].ranks.size(); ++i) {
      RankState& rs = states[next_state++];
      rs.job = &job;
      rs.init(job, i);
      prepare(rs);
      job.add(rs);
    }
    job.begin(iterations);
    ops_total += static_cast<uint64_t>(iterations) * job.ops_per_iteration;
  }
  return ops_total;
}

// What a simulated rank does once it has finished an iteration of its job.
enum class AfterIteration {
  kNext,         // begins the next iteration
  kFinished,     // has run every iteration its job planned
  kCloseWindow,  // the run ends here: with several jobs, every one has completed its iterations
};

// A rank of `job` finished `iteration` at `now_s`, in a run of `jobs` set to `iterations` each. With
// several jobs, the last to complete its iterations closes the window; a job that completes while
// another still runs keeps running, one more iteration at a time (decided by its first rank past its
// last planned one), so that the others keep its company on the fabric; `ops_total` grows by each
// such iteration.
template <typename JobState>
AfterIteration end_iteration(const std::vector<JobState>& jobs, JobProgress& job, int iteration, double now_s,
                             int iterations, uint64_t& ops_total) {
  const bool others_need = std::any_of(jobs.begin(), jobs.end(), [&](const JobState& other) {
    return &other != &job && other.completed < iterations;
  });
  if (job.count_end(iteration, now_s) && jobs.size() > 1 && job.completed >= iterations && !others_need) {
    return AfterIteration::kCloseWindow;
  }
  if (job.planned == iteration + 1 && iteration + 1 >= iterations && others_need) {
    ++job.planned;
    ops_total += job.ops_per_iteration;
  }
  return iteration + 1 < job.planned ? AfterIteration::kNext : AfterIteration::kFinished;
}

// A simulation's budgets and progress report (JobsOptions), checked after every op. Starts the wall
// clock.
class RunClock {
 public:
  explicit RunClock(const JobsOptions& options);
  // After op number `ops_executed` of `ops_total`, at simulated time `simulated_s`: the budget now
  // exhausted ("max-events" or "time-limit"), or "" while none is; calls the progress report when it
  // is due. The wall clock is read every kClockCheckOps ops.
  std::string after_op(uint64_t ops_executed, uint64_t ops_total, double simulated_s);

 private:
  const JobsOptions& options_;
  std::chrono::steady_clock::time_point started_;
  double next_report_s_;  // wall seconds since the start
};

// Throws DeadlockError, naming up to twelve waiting ops, when a rank of `ranks` has not finished the
// iterations its job planned; the simulation stopped at `now_s`.
void throw_if_unfinished(const std::vector<const RankProgress*>& ranks, bool several_jobs, double now_s);

}  // namespace trainsim::engine

#endif  // TRAINSIM_SIM_ENGINE_RANK_PROGRESS_H_
