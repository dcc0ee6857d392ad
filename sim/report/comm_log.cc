#include "sim/report/comm_log.h"

#include <map>
#include <tuple>

namespace trainsim::report {
namespace {

using nlohmann::json;
using workload::OpKind;

// nccl-tests' bus-bandwidth factor for a collective of `n` ranks (doc/PERFORMANCE.md).
double bus_factor(workload::CollectiveKind collective, int64_t n) {
  if (n <= 1) return 1.0;
  const double nd = static_cast<double>(n);
  switch (collective) {
    case workload::CollectiveKind::kAllReduce:
    case workload::CollectiveKind::kBarrier:
      return 2 * (nd - 1) / nd;
    default:
      return (nd - 1) / nd;
  }
}

}  // namespace

std::vector<CommRecord> comm_log(const workload::ParallelPlan& plan, const workload::Graph& graph,
                                 const engine::RankRun& run) {
  std::map<std::tuple<std::string, std::string, double>, std::pair<CommRecord, double>> records;
  for (workload::OpId id = 0; id < graph.size(); ++id) {
    const workload::Op& op = graph.op(id);
    CommRecord r;
    double factor = 1;
    if (op.kind == OpKind::kCollective) {
      r.kind = std::string(workload::to_string(op.collective.kind));
      r.group = std::string(workload::to_string(op.collective.group.kind));
      r.group_size = plan.group_size(op.collective.group.kind);
      factor = bus_factor(op.collective.kind, r.group_size);
    } else if (op.kind == OpKind::kSend) {
      r.kind = "send";
      r.group = std::string(workload::to_string(op.label));
      r.group_size = 2;
    } else {
      continue;
    }
    r.bytes_per_call = op.bytes;
    CommRecord& record =
        records.try_emplace({r.kind, r.group, op.bytes}, std::move(r), factor).first->second.first;
    record.calls += 1;
    record.time_s += run.end_s[id] - run.launch_s[id];
  }
  std::vector<CommRecord> out;
  out.reserve(records.size());
  for (auto& [key, entry] : records) {
    CommRecord& r = entry.first;
    r.mean_time_s = r.time_s / static_cast<double>(r.calls);
    r.algbw_bytes_per_s = r.mean_time_s > 0 ? r.bytes_per_call / r.mean_time_s : 0;
    r.busbw_bytes_per_s = r.algbw_bytes_per_s * entry.second;
    out.push_back(std::move(r));
  }
  return out;
}

json to_json(const CommRecord& r) {
  return {{"kind", r.kind},
          {"group", r.group},
          {"group_size", r.group_size},
          {"calls", r.calls},
          {"bytes_per_call", r.bytes_per_call},
          {"total_bytes", r.bytes_per_call * static_cast<double>(r.calls)},
          {"time_s", r.time_s},
          {"mean_time_s", r.mean_time_s},
          {"algbw_bytes_per_s", r.algbw_bytes_per_s},
          {"busbw_bytes_per_s", r.busbw_bytes_per_s}};
}

std::vector<CommRecord> comm_records(const json& comm) {
  std::vector<CommRecord> out;
  for (const json& e : comm) {
    out.push_back({e.at("kind").get<std::string>(), e.at("group").get<std::string>(),
                   e.at("group_size").get<int64_t>(), e.at("calls").get<int64_t>(),
                   e.at("bytes_per_call").get<double>(), e.at("time_s").get<double>(),
                   e.at("mean_time_s").get<double>(), e.at("algbw_bytes_per_s").get<double>(),
                   e.at("busbw_bytes_per_s").get<double>()});
  }
  return out;
}

}  // namespace trainsim::report
