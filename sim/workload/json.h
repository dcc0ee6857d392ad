// JSON views of graphs and graph summaries (nlohmann::json), for `trainsim workload --dump` and
// `trainsim analyze --format json`. Key order and content are deterministic.
//
// A graph: {"rank", "coords": {"tp","sp","dp","pp"}, "class", "micro_batches", "buffers",
// "op_count", "edge_count", "ops": [...]}; each op: {"id", "name", "kind", "stream", "phase",
// "label", "layer", "micro_batch", "index", "flops", "model_flops", "bytes", "deps": [ids]} plus
// the kind's fields: "gemm": {"m","n","k","pass"}, "attention": {"batch","heads","kv_heads",
// "q_len","kv_len","head_dim","causal","fused"}, "collective": {"kind","group","group_index",
// "members","seq"}, "p2p": {"peer","tag"}, "copy": {"direction"}, "buffer": {"id","space","category"}.
#ifndef TRAINSIM_SIM_WORKLOAD_JSON_H_
#define TRAINSIM_SIM_WORKLOAD_JSON_H_

#include <nlohmann/json.hpp>

#include "sim/workload/graph.h"
#include "sim/workload/plan.h"
#include "sim/workload/summary.h"

namespace trainsim::workload {

nlohmann::json to_json(const Graph& graph, const ParallelPlan& plan);
nlohmann::json to_json(const ClassSummary& summary);

}  // namespace trainsim::workload

#endif  // TRAINSIM_SIM_WORKLOAD_JSON_H_
