// The communication log of a run report (its "comm" array): the critical rank's collectives and
// sends in nccl-tests form, one record per kind, group and message size over the iteration.
#ifndef TRAINSIM_SIM_REPORT_COMM_LOG_H_
#define TRAINSIM_SIM_REPORT_COMM_LOG_H_

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/engine/engine.h"
#include "sim/workload/graph.h"
#include "sim/workload/plan.h"

namespace trainsim::report {

// The calls of one kind (all_reduce, ..., send) in one group (tp, dp, ..., or a send's label) with
// one message size. Times run from each call's launch (every member arrived) to its end; algbw is
// bytes per call over the mean time, busbw algbw times nccl-tests' bus factor for the group size
// (doc/PERFORMANCE.md in nccl-tests; 1 for sends).
struct CommRecord {
  std::string kind;
  std::string group;
  int64_t group_size = 0;  // 2 for a send
  int64_t calls = 0;
  double bytes_per_call = 0;
  double time_s = 0;  // every call's, summed
  double mean_time_s = 0;
  double algbw_bytes_per_s = 0;
  double busbw_bytes_per_s = 0;
};

// The log of `graph` (a rank of `plan`) as `run` timed it, ordered by kind, group and size.
std::vector<CommRecord> comm_log(const workload::ParallelPlan& plan, const workload::Graph& graph,
                                 const engine::RankRun& run);

// A record as the report writes it (the fields above and total_bytes, bytes_per_call x calls).
nlohmann::json to_json(const CommRecord& record);
// The records of a report's "comm" array. Throws nlohmann::json::exception when one lacks a field.
std::vector<CommRecord> comm_records(const nlohmann::json& comm);

}  // namespace trainsim::report

#endif  // TRAINSIM_SIM_REPORT_COMM_LOG_H_
