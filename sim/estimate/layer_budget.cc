#include "sim/estimate/layer_budget.h"

#include <map>
#include <stdexcept>
#include <tuple>

#include <fmt/format.h>

#include "sim/common/text_table.h"
#include "sim/config/units.h"
#include "sim/cost/compute_model.h"
#include "sim/cost/ideal_transfers.h"
#include "sim/cost/op_cost.h"
#include "sim/workload/builder.h"
#include "sim/workload/plan.h"

namespace trainsim::estimate {
namespace {

using workload::Op;
using workload::OpKind;
using workload::Phase;

std::string shape_of(const Op& op, const workload::ParallelPlan& plan) {
  switch (op.kind) {
    case OpKind::kGemm:
      return fmt::format("{}{}x{}x{} {}", op.gemm.groups > 1 ? fmt::format("{} x ", op.gemm.groups) : "",
                         op.gemm.m, op.gemm.n, op.gemm.k, workload::to_string(op.gemm.pass));
    case OpKind::kAttentionForward:
    case OpKind::kAttentionBackward:
      return fmt::format("{} q{} kv{} b{} h{}/{} d{}{}", op.attention.fused ? "fused" : "unfused",
                         op.attention.q_len, op.attention.kv_len, op.attention.batch, op.attention.heads,
                         op.attention.kv_heads, op.attention.head_dim, op.attention.causal ? " causal" : "");
    case OpKind::kCollective:
      return fmt::format("{} over {} ({}), {}", workload::to_string(op.collective.kind),
                         workload::to_string(op.collective.group.kind),
                         plan.group_size(op.collective.group.kind), config::format_bytes_rounded(op.bytes));
    case OpKind::kSend:
    case OpKind::kRecv:
    case OpKind::kCopy:
    case OpKind::kMemory:
    case OpKind::kOptimizerStep:
      return config::format_bytes_rounded(op.bytes);
    case OpKind::kHostSync:
    case OpKind::kStreamWait:
    case OpKind::kAlloc:
    case OpKind::kFree:
      return "";
  }
  return "";
}

bool transfer(OpKind kind) {
  return kind == OpKind::kCollective || kind == OpKind::kSend || kind == OpKind::kRecv ||
         kind == OpKind::kCopy;
}

}  // namespace

LayerBudget layer_budget(const config::Scenario& scenario, int32_t layer) {
  if (layer < 0 || layer >= scenario.model.layers) {
    throw std::invalid_argument(
        fmt::format("--layer {}: the model has layers 0 to {}", layer, scenario.model.layers - 1));
  }
  const workload::ParallelPlan plan = workload::make_plan(scenario);
  WarningLog warnings;
  const cost::ComputeModel compute(scenario.cluster.hardware, &warnings);
  cost::IdealTransfers transfers(scenario, plan);
  for (const workload::Graph& graph : workload::build_class_graphs(scenario, plan)) {
    int32_t first_micro_batch = -1;
    for (workload::OpId id = 0; id < graph.size(); ++id) {
      const Op& op = graph.op(id);
      if (op.layer == layer && op.micro_batch >= 0 &&
          (first_micro_batch < 0 || op.micro_batch < first_micro_batch)) {
        first_micro_batch = op.micro_batch;
      }
    }
    if (first_micro_batch < 0) continue;
    LayerBudget out{graph.info.rank, layer, first_micro_batch, {}, {}};
    const std::vector<double> kernel_s = cost::compute_durations(graph, compute);
    // Lines by phase, then first issue; the key merges ops of one label, kind and shape.
    std::map<std::tuple<Phase, workload::OpLabel, OpKind, std::string>, size_t> index;
    std::map<Phase, std::vector<LayerBudgetLine>> by_phase;
    for (workload::OpId id = 0; id < graph.size(); ++id) {
      const Op& op = graph.op(id);
      if (op.layer != layer || (op.micro_batch >= 0 && op.micro_batch != first_micro_batch)) continue;
      if (op.kind == OpKind::kStreamWait || op.kind == OpKind::kAlloc || op.kind == OpKind::kFree) continue;
      const std::string shape = shape_of(op, plan);
      std::vector<LayerBudgetLine>& lines = by_phase[op.phase];
      const auto [it, inserted] = index.try_emplace({op.phase, op.label, op.kind, shape}, lines.size());
      if (inserted) lines.push_back({op.phase, op.label, op.kind, shape, 0, 0, 0});
      LayerBudgetLine& line = lines[it->second];
      ++line.calls;
      line.time_s += kernel_s[id] + transfers.op_s(op, graph.info.rank);
      line.flops += op.flops;
    }
    for (auto& [phase, lines] : by_phase) out.lines.insert(out.lines.end(), lines.begin(), lines.end());
    out.warnings = warnings.messages();
    return out;
  }
  throw std::invalid_argument(fmt::format("--layer {}: no rank's graph holds that layer", layer));
}

std::string render_layer_budget(const LayerBudget& b) {
  std::string out = fmt::format(
      "# layer {}, micro-batch {}, on rank {}: each op's kernel time at the hardware profile's rates and "
      "each transfer alone on the network (--network ideal); sums, overlap not counted\n",
      b.layer, b.micro_batch, b.rank);
  using Align = TextTable::Align;
  TextTable table({{"phase", Align::kLeft},
                   {"op", Align::kLeft},
                   {"kind", Align::kLeft},
                   {"shape", Align::kLeft},
                   {"calls"},
                   {"time (ms)"},
                   {"of phase"},
                   {"TFLOP/s"}});
  std::map<Phase, std::pair<double, double>> totals;  // kernels, transfers
  for (const LayerBudgetLine& l : b.lines) {
    (transfer(l.kind) ? totals[l.phase].second : totals[l.phase].first) += l.time_s;
  }
  Phase current = b.lines.empty() ? Phase::kForward : b.lines.front().phase;
  const auto close_phase = [&](Phase phase) {
    const auto& [kernels_s, transfers_s] = totals[phase];
    table.add_line(fmt::format("  {} total: kernels {:.3f} ms, transfers {:.3f} ms",
                               workload::to_string(phase), 1e3 * kernels_s, 1e3 * transfers_s));
  };
  for (const LayerBudgetLine& l : b.lines) {
    if (l.phase != current) {
      close_phase(current);
      current = l.phase;
    }
    const double phase_s = totals[l.phase].first + totals[l.phase].second;
    table.add_row({std::string(workload::to_string(l.phase)), std::string(workload::to_string(l.label)),
                   std::string(workload::to_string(l.kind)), l.shape, std::to_string(l.calls),
                   fmt::format("{:.3f}", 1e3 * l.time_s),
                   phase_s > 0 ? fmt::format("{:.1f}%", 100 * l.time_s / phase_s) : "",
                   l.flops > 0 && l.time_s > 0 ? fmt::format("{:.0f}", l.flops / l.time_s / 1e12) : ""});
  }
  if (!b.lines.empty()) close_phase(current);
  out += table.render();
  for (const std::string& w : b.warnings) out += "# warning: " + w + "\n";
  return out;
}

nlohmann::json to_json(const LayerBudget& b) {
  nlohmann::json lines = nlohmann::json::array();
  for (const LayerBudgetLine& l : b.lines) {
    lines.push_back({{"phase", workload::to_string(l.phase)},
                     {"op", workload::to_string(l.label)},
                     {"kind", workload::to_string(l.kind)},
                     {"shape", l.shape},
                     {"calls", l.calls},
                     {"time_s", l.time_s},
                     {"flops", l.flops},
                     {"transfer", transfer(l.kind)}});
  }
  return {{"layer", b.layer},
          {"micro_batch", b.micro_batch},
          {"rank", b.rank},
          {"lines", lines},
          {"warnings", b.warnings}};
}

}  // namespace trainsim::estimate
