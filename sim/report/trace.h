// Chrome trace JSON (the object form Perfetto and chrome://tracing open): one process per node, one
// track per GPU stream (a stream's receives on a track of their own beside its sends, so that the two
// never overlap), an "X" event per op named by what it is, its pass, layer and micro-batch ("fc1 gemm
// bwd L3 mb0"; a collective by its kind, group and size: "grad_sync all_reduce dp 25MiB"), flow
// arrows from each send to its receive, and unless turned off a counter of HBM in use per GPU and, when
// the hardware profile gives power, one of each GPU's board power over the last iteration
// (report/power.h). Timestamps are microseconds of simulated time.
#ifndef TRAINSIM_SIM_REPORT_TRACE_H_
#define TRAINSIM_SIM_REPORT_TRACE_H_

#include <cstdint>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "sim/config/scenario.h"
#include "sim/engine/scenario_run.h"

namespace trainsim::report {

struct TraceOptions {
  std::set<int64_t> ranks;  // only these ranks (empty: every simulated rank)
  bool counters = true;     // the HBM and power counters
};

// Writes the trace of `run` to `out`; returns the number of events written.
size_t write_chrome_trace(const config::Scenario& scenario, const engine::ScenarioRun& run,
                          const TraceOptions& options, std::ostream& out);

// One job of a trace of several that ran together on one cluster.
struct TracePart {
  const config::Scenario* scenario = nullptr;
  const engine::ScenarioRun* run = nullptr;
  std::vector<int64_t> nodes;  // the cluster node of each of the job's nodes, in order
  std::string job;             // named in its processes ("node 5, job a") and flow ids
};

// Writes one trace of `parts` (every simulated rank of each, with counters), a process per cluster node, to
// `out`; `name` names the whole. Returns the number of events written.
size_t write_chrome_trace(const std::vector<TracePart>& parts, const std::string& name, std::ostream& out);

}  // namespace trainsim::report

#endif  // TRAINSIM_SIM_REPORT_TRACE_H_
