// Running a sweep (or one shard of it) into an output directory: points evaluated in forked children
// (one simulated point per child, closed-form points several to a child), `jobs` at a time, results appended
// to DIR/results.jsonl in point order (completions that arrive early wait for the points before them, so the
// file is the same whatever `jobs`), then DIR/results.csv rewritten. A directory that already holds results
// of the same sweep, shard and mode is continued with `resume` (finished points are skipped); one holding
// another sweep's is refused.
#ifndef TRAINSIM_SIM_SWEEP_RUNNER_H_
#define TRAINSIM_SIM_SWEEP_RUNNER_H_

#include <cstddef>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "sim/sweep/evaluate.h"
#include "sim/sweep/expand.h"
#include "sim/sweep/progress.h"
#include "sim/sweep/results.h"

namespace trainsim::sweep {

struct SweepOptions {
  std::filesystem::path out;
  int jobs = 1;
  EvaluateOptions evaluate;
  bool resume = false;
  size_t shard_index = 0;  // this run evaluates the points whose index mod shard_count == shard_index
  size_t shard_count = 1;
  double time_limit_per_point_s = 0;  // 0 = none; a point over it is a "failed" result
  std::string sweep_file;             // as given on the command line, for sweep.json
};

struct SweepSummary {
  size_t shard_points = 0;   // points of this shard
  size_t skipped = 0;        // already in results.jsonl (resume)
  size_t evaluated = 0;      // finished in this run
  bool interrupted = false;  // `stop` ended the run early
};

// The indices of the points of shard `index` of `count`.
std::vector<size_t> shard_points(size_t points, size_t index, size_t count);

// Runs the sweep. `make_progress` (may be empty) makes the progress report for the number of points
// left to evaluate, which is then told of each result; `stop` (may be empty), checked between
// completions, ends the run early: the points in flight are killed and not recorded, those finished
// are, and results.csv is rewritten. Throws SweepError for directory problems.
SweepSummary run_sweep(const SweepFile& sweep, const ExpandedSweep& expanded, const SweepOptions& options,
                       const std::function<std::unique_ptr<Progress>(size_t total)>& make_progress,
                       const std::function<bool()>& stop);

}  // namespace trainsim::sweep

#endif  // TRAINSIM_SIM_SWEEP_RUNNER_H_
