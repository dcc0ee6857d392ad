#include "sim/workload/json.h"

namespace trainsim::workload {
namespace {

nlohmann::json category_json(const CategoryBytes& bytes) {
  nlohmann::json j = nlohmann::json::object();
  for (int c = 0; c < kMemoryCategoryCount; ++c)
    j[std::string(to_string(static_cast<MemoryCategory>(c)))] = bytes[c];
  return j;
}

}  // namespace

nlohmann::json to_json(const Graph& graph, const ParallelPlan& plan) {
  nlohmann::json j;
  j["rank"] = graph.info.rank;
  j["coords"] = {{"tp", graph.info.coords.tp()},
                 {"sp", graph.info.coords.sp()},
                 {"dp", graph.info.coords.dp()},
                 {"pp", graph.info.coords.pp()}};
  j["class"] = graph.info.symmetry_class;
  j["micro_batches"] = graph.info.micro_batches;
  j["buffers"] = graph.info.buffers;
  j["op_count"] = graph.size();
  j["edge_count"] = graph.edge_count();
  nlohmann::json ops = nlohmann::json::array();
  for (OpId id = 0; id < graph.size(); ++id) {
    const Op& op = graph.op(id);
    nlohmann::json o = {{"id", id},
                        {"name", op_name(op)},
                        {"kind", to_string(op.kind)},
                        {"stream", to_string(op.stream)},
                        {"phase", to_string(op.phase)},
                        {"label", to_string(op.label)},
                        {"layer", op.layer},
                        {"micro_batch", op.micro_batch},
                        {"index", op.index},
                        {"flops", op.flops},
                        {"model_flops", op.model_flops},
                        {"bytes", op.bytes}};
    const auto preds = graph.predecessors(id);
    o["deps"] = std::vector<OpId>(preds.begin(), preds.end());
    switch (op.kind) {
      case OpKind::kGemm:
        o["gemm"] = {{"m", op.gemm.m}, {"n", op.gemm.n}, {"k", op.gemm.k}, {"pass", to_string(op.gemm.pass)}};
        if (op.gemm.groups > 1) o["gemm"]["groups"] = op.gemm.groups;
        break;
      case OpKind::kAttentionForward:
      case OpKind::kAttentionBackward: {
        const AttentionShape& a = op.attention;
        o["attention"] = {{"batch", a.batch},   {"heads", a.heads},   {"kv_heads", a.kv_heads},
                          {"q_len", a.q_len},   {"kv_len", a.kv_len}, {"head_dim", a.head_dim},
                          {"causal", a.causal}, {"fused", a.fused},   {"dropout", a.dropout}};
        if (a.value_dim != a.head_dim) o["attention"]["value_dim"] = a.value_dim;
        break;
      }
      case OpKind::kCollective:
        o["collective"] = {{"kind", to_string(op.collective.kind)},
                           {"group", to_string(op.collective.group.kind)},
                           {"group_index", op.collective.group.index},
                           {"members", plan.group_size(op.collective.group.kind)},
                           {"seq", op.collective.seq}};
        break;
      case OpKind::kSend:
      case OpKind::kRecv:
        o["p2p"] = {{"peer", op.p2p.peer}, {"tag", op.p2p.tag}};
        break;
      case OpKind::kCopy:
        o["copy"] = {{"direction", to_string(op.copy.direction)}};
        break;
      case OpKind::kAlloc:
      case OpKind::kFree:
        o["buffer"] = {{"id", op.buffer.buffer},
                       {"space", to_string(op.buffer.space)},
                       {"category", to_string(op.buffer.category)}};
        break;
      case OpKind::kMemory:  // no fields beyond the common ones
      case OpKind::kOptimizerStep:
      case OpKind::kHostSync:
      case OpKind::kStreamWait:
        break;
    }
    ops.push_back(std::move(o));
  }
  j["ops"] = std::move(ops);
  return j;
}

nlohmann::json to_json(const ClassSummary& s) {
  nlohmann::json j;
  j["class"] = s.cls.id;
  j["stage"] = s.cls.stage;
  j["representative"] = s.cls.representative;
  j["ranks"] = s.cls.size;
  j["ops"] = s.ops;
  j["edges"] = s.edges;
  j["params_per_rank"] = s.params_per_rank;
  j["flops"] = {{"executed", s.flops.executed}, {"model", s.flops.model}, {"hardware", s.flops.hardware}};
  const CategoryBytes& at_peak = s.memory.hbm_at_peak;
  j["memory"] = category_json(at_peak);
  j["memory"]["peak_hbm_bytes"] = s.memory.peak_hbm_bytes;
  j["memory"]["max_by_category"] = category_json(s.memory.hbm_max);
  j["memory"]["peak_host_bytes"] = s.memory.peak_host_bytes;
  nlohmann::json comm = nlohmann::json::array();
  for (const CommLogEntry& e : s.comm) {
    comm.push_back({{"kind", to_string(e.kind)},
                    {"group", to_string(e.group)},
                    {"group_size", e.group_size},
                    {"calls", e.calls},
                    {"bytes_per_call", e.bytes_per_call},
                    {"total_bytes", e.total_bytes},
                    {"volume_bytes", e.volume_bytes},
                    {"wire_bytes", e.wire_bytes}});
  }
  j["comm"] = std::move(comm);
  return j;
}

}  // namespace trainsim::workload
