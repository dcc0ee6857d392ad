#include "sim/workload/kernel_shapes.h"

#include <algorithm>
#include <map>
#include <utility>

#include "sim/workload/builder.h"

namespace trainsim::workload {
namespace {

template <class T>
void add_once(std::vector<T>& list, const T& item) {
  if (std::find(list.begin(), list.end(), item) == list.end()) list.push_back(item);
}

// Whether the members of each group lie within one node, computed once per group.
class Placement {
 public:
  Placement(const ParallelPlan& plan, const config::Topology& topology)
      : plan_(plan), gpus_per_node_(std::max<int64_t>(1, topology.node.gpus)) {}

  bool one_node(GroupId group) {
    const auto key = std::make_pair(static_cast<int>(group.kind), group.index);
    const auto found = cache_.find(key);
    if (found != cache_.end()) return found->second;
    const std::vector<int64_t> members = plan_.members(group);
    const bool within =
        members.empty() || members.front() / gpus_per_node_ == members.back() / gpus_per_node_;
    cache_.emplace(key, within);
    return within;
  }
  bool one_node(int64_t rank, int64_t peer) const { return rank / gpus_per_node_ == peer / gpus_per_node_; }

 private:
  const ParallelPlan& plan_;
  int64_t gpus_per_node_;
  std::map<std::pair<int, int32_t>, bool> cache_;
};

void add_gemm(KernelShapes& out, config::Dtype dtype, const GemmShape& g) {
  add_once(out.gemms, {dtype, int64_t{g.groups} * g.m, g.n, g.k});
}

void add_attention(KernelShapes& out, const Op& op) {
  const AttentionShape& a = op.attention;
  if (!a.fused) {
    const UnfusedAttentionGemms g = unfused_attention_gemms(a);
    add_gemm(out, op.dtype, g.scores);
    add_gemm(out, op.dtype, g.values);
    return;
  }
  const config::AttentionPass pass = op.kind == OpKind::kAttentionForward ? config::AttentionPass::kForward
                                                                          : config::AttentionPass::kBackward;
  add_once(out.attentions, {pass, op.dtype, a.batch, a.heads, a.kv_heads, a.q_len, a.kv_len, a.head_dim,
                            a.value_dim, a.causal});
}

}  // namespace

KernelShapes kernel_shapes(const std::vector<Graph>& graphs, const ParallelPlan& plan,
                           const config::Topology& topology) {
  KernelShapes out;
  Placement placement(plan, topology);
  for (const Graph& graph : graphs) {
    const int64_t rank = graph.info.rank;
    for (const Op& op : graph.ops()) {
      switch (op.kind) {
        case OpKind::kGemm:
          add_gemm(out, op.dtype, op.gemm);
          break;
        case OpKind::kAttentionForward:
        case OpKind::kAttentionBackward:
          add_attention(out, op);
          break;
        case OpKind::kCollective: {
          const GroupId group = op.collective.group;
          // A barrier moves nothing (cost/collective_plan.cc), and nccl-tests' size of one is 0.
          const double bytes = op.collective.kind == CollectiveKind::kBarrier ? 0 : op.bytes;
          add_once(out.collectives, {profile_kind(op.collective.kind), plan.group_size(group.kind), bytes,
                                     placement.one_node(group)});
          break;
        }
        case OpKind::kSend:
          add_once(out.collectives,
                   {config::CollectiveKind::kSendRecv, 2, op.bytes, placement.one_node(rank, op.p2p.peer)});
          break;
        case OpKind::kCopy:
          add_once(out.copies,
                   {op.copy.direction == CopyDirection::kHostToDevice ? config::CopyDirection::kHostToDevice
                                                                      : config::CopyDirection::kDeviceToHost,
                    op.bytes});
          break;
        case OpKind::kRecv:  // the send's message
        case OpKind::kMemory:
        case OpKind::kOptimizerStep:
        case OpKind::kHostSync:
        case OpKind::kStreamWait:
        case OpKind::kAlloc:
        case OpKind::kFree:
          break;
      }
    }
  }
  return out;
}

KernelShapes kernel_shapes(const config::Scenario& scenario) {
  const ParallelPlan plan = make_plan(scenario);
  return kernel_shapes(build_class_graphs(scenario, plan), plan, scenario.cluster.topology);
}

}  // namespace trainsim::workload
