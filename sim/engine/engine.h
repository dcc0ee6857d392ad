// The engine: runs per-rank operation graphs on SimGrid and reports when each op ran. Each simulated
// rank gets one actor per stream that holds ops; an op starts once its predecessors have finished
// (the graph encodes stream order too), collectives start when every member has arrived,
// sends/receives rendezvous. By default one representative per symmetry class is simulated: the
// other members of a collective are taken to arrive together with it (they run the same graph), and
// a receive from an unsimulated peer is matched with the representative's own send of the same tag
// (its mirror image). `full` simulates every rank.
#ifndef TRAINSIM_SIM_ENGINE_ENGINE_H_
#define TRAINSIM_SIM_ENGINE_ENGINE_H_

#include <array>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/config/scenario.h"
#include "sim/cost/compute_model.h"
#include "sim/engine/transport.h"
#include "sim/workload/graph.h"
#include "sim/workload/plan.h"

namespace trainsim::engine {

// What a collapsed run puts on the network for the ranks it does not simulate (workload/mirrors.h):
// with each collective, send and host copy of a simulated rank, the same one of every rank it stands
// for, started at the same instant on their own GPUs (their own groups, peers and routes), so the
// links carry the whole job's load while compute is simulated once per class. Nothing is waited
// for but the simulated rank's own.
enum class MirrorMode {
  kNone,     // the simulated ranks' traffic only
  kCoupled,  // the mirrors that can share a link with the simulated traffic, directly or through other
             // mirrors (Transport::coupled): the others cannot change its timing
  kAll,      // every mirror (a complete link load)
};

// Where a simulation in progress stands: ops run of those it will run (the total grows when a job of
// several runs an extra iteration), the simulated time reached and the wall-clock time spent.
struct SimulationProgress {
  uint64_t ops_executed = 0;
  uint64_t ops_total = 0;
  double simulated_s = 0;
  double wall_s = 0;
};

// Called while a simulation runs, at most once per `every_s` of wall-clock time (the clock is read
// every few hundred ops): for a progress line on long runs.
struct ProgressReport {
  std::function<void(const SimulationProgress&)> call;  // none when empty
  double every_s = 10;
};

struct EngineOptions {
  bool full = false;   // simulate every rank instead of one per symmetry class
  int iterations = 1;  // consecutive training iterations
  // Budgets; 0 = none. The simulation stops (BudgetExceededError) once it has executed max_events
  // ops with more to go, or once it has run longer than time_limit_s of host (wall-clock) time.
  uint64_t max_events = 0;
  double time_limit_s = 0;
  // Kernel speed of each simulated rank, in the order of `ranks` (workload/gpu_speed.h); empty when
  // every GPU runs at the profile's rates.
  std::vector<double> compute_speed{};
  MirrorMode mirror = MirrorMode::kNone;  // collapsed runs only
  ProgressReport progress{};
};

// When each op of a rank ran (in the last iteration), and the rank's memory high-water marks.
struct RankRun {
  int64_t rank = 0;
  int32_t symmetry_class = 0;
  std::vector<double> start_s;  // per op id: when the op was ready to run (issued on its stream)
  std::vector<double> end_s;
  // When the op's work began: later than start_s for a collective or send/receive that waited for
  // its peers (so end_s - launch_s is the communication time proper, as nccl-tests measures it).
  std::vector<double> launch_s;
  double finish_s = 0;  // end of its last op (last iteration)
  double peak_hbm_bytes = 0;
  std::array<double, workload::kMemoryCategoryCount> hbm_at_peak_bytes{};  // by category, at the peak
  double peak_host_bytes = 0;                          // this rank's pinned host memory high-water mark
  std::vector<std::pair<double, double>> hbm_samples;  // (time, bytes in use) after each change
};

struct EngineResult {
  double iteration_time_s = 0;  // the last iteration, from the end of the previous one
  double total_time_s = 0;      // all iterations
  std::vector<RankRun> ranks;   // the simulated ranks, ascending
  int64_t critical_rank = 0;    // the rank that finished last
  uint64_t ops_executed = 0;    // ops run, all ranks and iterations
  // When each iteration the job ran ended (its last simulated rank done with it): the requested
  // iterations, then, in a run of several jobs, those it ran while others were still going.
  std::vector<double> iteration_end_s;
  // Mirrored communications (EngineOptions::mirror) of the whole run, all jobs: found, and played.
  size_t mirrors_found = 0;
  size_t mirrors_played = 0;
};

// A simulation that cannot finish: ops that wait for something that never happens (a receive
// without its send, a collective some member never enters). The message names them.
class DeadlockError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A simulation stopped by one of its budgets (EngineOptions::max_events, time_limit_s) before the
// last op; what() says which budget and how far the simulation got.
class BudgetExceededError : public std::runtime_error {
 public:
  BudgetExceededError(std::string limit, double simulated_s, uint64_t ops_executed, uint64_t ops_total);
  const std::string& limit() const { return limit_; }  // "max-events" or "time-limit"
  double simulated_s() const { return simulated_s_; }  // simulated time reached
  uint64_t ops_executed() const { return ops_executed_; }
  uint64_t ops_total() const { return ops_total_; }  // all simulated ranks and iterations

 private:
  std::string limit_;
  double simulated_s_;
  uint64_t ops_executed_;
  uint64_t ops_total_;
};

// Runs `graphs` (one per simulated rank: rank `ranks[i]` runs `graphs[i]`, built for it or for another
// rank of its symmetry class, whose groups and peers it renames, workload/renaming.h; the ranks of
// a class may share one graph) for `options.iterations` iterations. Creates the process's one SimGrid Engine,
// so it can be called once per process. Throws DeadlockError and BudgetExceededError.
EngineResult simulate(const workload::ParallelPlan& plan, const std::vector<int64_t>& ranks,
                      const std::vector<const workload::Graph*>& graphs, Transport& transport,
                      const cost::ComputeModel& compute, const EngineOptions& options);

// One training job of a run of several on a shared cluster (simulate_jobs): its plan, the ranks
// simulated with their graphs and speeds, its cost model, and where its ranks sit.
struct Job {
  const workload::ParallelPlan* plan = nullptr;
  std::vector<int64_t> ranks;                  // simulated, ascending
  std::vector<const workload::Graph*> graphs;  // of `ranks`, as in simulate
  const cost::ComputeModel* compute = nullptr;
  std::vector<double> compute_speed;  // per simulated rank, as EngineOptions::compute_speed
  // The transport's GPU that each rank of the plan runs on; empty: rank r on GPU r.
  std::vector<int64_t> gpu_of_rank;
  double start_s = 0;  // simulated time at which the job's first iteration begins

  // The transport's GPU of rank `rank` of the plan.
  int64_t gpu_of(int64_t rank) const {
    return gpu_of_rank.empty() ? rank : gpu_of_rank[static_cast<size_t>(rank)];
  }
};

// How long a run of several jobs goes on.
struct JobsOptions {
  // Every job runs at least this many iterations; a job that gets there first keeps iterating until
  // every job has, so that each job's first `iterations` iterations run with all the others running,
  // and the simulation ends there (the iterations it cuts short are not in iteration_end_s). A job's
  // ops' times (RankRun) are those of its iteration number `iterations`.
  int iterations = 1;
  uint64_t max_events = 0;  // as in EngineOptions, over all jobs
  double time_limit_s = 0;
  MirrorMode mirror = MirrorMode::kNone;  // for the jobs that do not simulate every rank
  ProgressReport progress{};
};

// Runs `jobs` together on one transport (their traffic shares its links) and returns one result per
// job, in order. A job's collectives, sends and receives stay among its own ranks; ranks of different
// jobs must not sit on the same GPU. Creates the process's one SimGrid Engine, like simulate. Throws
// DeadlockError and BudgetExceededError.
std::vector<EngineResult> simulate_jobs(const std::vector<Job>& jobs, Transport& transport,
                                        const JobsOptions& options);

}  // namespace trainsim::engine

#endif  // TRAINSIM_SIM_ENGINE_ENGINE_H_
