// Runs tasks in forked child processes, a bounded number at a time. SimGrid allows one simulation
// per process, so sweeps and the validation suite run each simulation in its own child; a task that
// crashes, aborts or overruns its time limit is reported as a failed result instead of taking the
// caller down.
#ifndef TRAINSIM_SIM_COMMON_ISOLATED_H_
#define TRAINSIM_SIM_COMMON_ISOLATED_H_

#include <cstddef>
#include <functional>
#include <string>

#include <nlohmann/json.hpp>

namespace trainsim {

// What one task produced.
struct IsolatedResult {
  bool ok = false;       // the task returned a value
  nlohmann::json value;  // the returned value when ok
  std::string error;     // otherwise: the exception's message, or how the child ended
};

struct IsolatedOptions {
  int jobs = 1;             // children in flight at once, >= 1
  double time_limit_s = 0;  // per task; 0 = none. An overrunning child is killed (SIGKILL).
};

// Runs task(i) for i in [0, count), each in a fork()ed child, and calls on_done(i, result) in the
// calling process as each finishes (completion order; for a deterministic order, collect and sort).
// The task's return value travels back as JSON; an exception in the task becomes `error` with its
// what(). The caller must not hold SimGrid state (fork before any engine exists). on_done may
// throw; the children still running are then killed and reaped before the exception propagates.
// Returns early, killing the children in flight, when `stop` (if given) returns true between
// completions; the tasks not started are simply not run.
void run_isolated(size_t count, const IsolatedOptions& options,
                  const std::function<nlohmann::json(size_t)>& task,
                  const std::function<void(size_t, IsolatedResult)>& on_done,
                  const std::function<bool()>& stop = {});

}  // namespace trainsim

#endif  // TRAINSIM_SIM_COMMON_ISOLATED_H_
