// Chrome trace JSON (the object form Perfetto and chrome://tracing open): one process per node, one
// track per GPU stream, an "X" event per op, flow arrows from each send to its receive, a counter of
// HBM in use per GPU and, when the hardware profile gives power, one of each GPU's board power over
// the last iteration (report/power.h). Timestamps are microseconds of simulated time.
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

// Writes one trace of `parts` (every simulated rank of each), a process per cluster node, to `out`;
// `name` names the whole. Returns the number of events written.
size_t write_chrome_trace(const std::vector<TracePart>& parts, const std::string& name, std::ostream& out);

}  // namespace trainsim::report

#endif  // TRAINSIM_SIM_REPORT_TRACE_H_
