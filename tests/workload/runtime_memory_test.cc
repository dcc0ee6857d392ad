// The runtime's memory in a rank's graph: the CUDA context and NCCL's buffers for the communicators
// and peers the rank uses, sized from the hardware profile.
#include "sim/workload/runtime_memory.h"

#include <gtest/gtest.h>

#include "sim/workload/builder.h"
#include "sim/workload/memory.h"
#include "tests/workload/workload_test_util.h"

namespace trainsim::workload {
namespace {

constexpr double kMB = 1e6;
const config::RuntimeMemory kCited{300 * kMB, 688 * kMB, 469 * kMB, 29 * kMB};

double runtime_bytes(const Graph& graph) {
  return memory_timeline(graph).hbm_max[static_cast<int>(MemoryCategory::kRuntime)];
}

// Megatron TP2 x DP2 x PP2 with two GPUs per node: rank 0's tensor-parallel partner shares its node,
// its data-parallel partner and its next pipeline stage do not.
TEST(RuntimeMemory, MegatronRankPaysForEachGroupItUsesAndItsPipelinePeer) {
  config::Scenario s = testing::make_scenario("gpt3-125m", 4, 1, {.tp = 2, .pp = 2, .dp = 2});
  s.cluster.topology.node.gpus = 2;
  s.cluster.hardware.runtime_memory = kCited;
  const ParallelPlan plan = make_plan(s);
  const Graph g = build_rank_graph(s, plan, 0);
  const CommunicatorUse use = communicator_use(g, plan, 2);
  EXPECT_EQ(use.collective_communicators, 3);  // tp, dp, and the tied embedding's first/last stage
  EXPECT_EQ(use.p2p_peers_in_node, 0);
  EXPECT_EQ(use.p2p_peers_across_nodes, 1);  // rank 4, stage 1
  EXPECT_DOUBLE_EQ(runtime_memory_bytes(use, kCited), (300 + 3 * 688 + 29) * kMB);
  // Allocated first, freed last: it is in the peak whatever the schedule does.
  EXPECT_EQ(g.op(0).kind, OpKind::kAlloc);
  EXPECT_EQ(g.op(0).buffer.category, MemoryCategory::kRuntime);
  EXPECT_EQ(g.ops().back().kind, OpKind::kFree);
  EXPECT_EQ(g.ops().back().buffer.category, MemoryCategory::kRuntime);
  EXPECT_DOUBLE_EQ(runtime_bytes(g), (300 + 3 * 688 + 29) * kMB);
  EXPECT_DOUBLE_EQ(memory_timeline(g).hbm_at_peak[static_cast<int>(MemoryCategory::kRuntime)],
                   runtime_bytes(g));
}

// Ulysses' all-to-all connects every other member of the sequence-parallel group.
TEST(RuntimeMemory, AllToAllConnectsEveryOtherMemberOfItsGroup) {
  config::Scenario s = testing::make_scenario(
      "gpt3-125m", 2, 1, {.dp = 2, .sp = 4, .sequence = config::SequenceParallel::kUlysses});
  s.cluster.hardware.runtime_memory = kCited;
  for (const int64_t gpus_per_node : {8, 2}) {
    s.cluster.topology.node.gpus = gpus_per_node;
    const ParallelPlan plan = make_plan(s);
    const CommunicatorUse use = communicator_use(build_rank_graph(s, plan, 0), plan, gpus_per_node);
    EXPECT_EQ(use.p2p_peers_in_node + use.p2p_peers_across_nodes, 3) << gpus_per_node;
    EXPECT_EQ(use.p2p_peers_in_node, gpus_per_node == 8 ? 3 : 1) << gpus_per_node;
  }
}

TEST(RuntimeMemory, AProfileWithoutItAddsNothingToTheGraph) {
  const config::Scenario s = testing::make_scenario("gpt3-125m", 4, 1, {.tp = 2, .pp = 2, .dp = 2});
  const Graph g = build_rank_graph(s, make_plan(s), 0);
  EXPECT_EQ(testing::count_ops(g, [](const Op& op) { return op.label == OpLabel::kRuntime; }), 0);
  WarningLog warnings;
  warn_without_runtime_memory(s.cluster.hardware, warnings);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings.messages()[0].find("gives no runtime_memory"), std::string::npos);
}

}  // namespace
}  // namespace trainsim::workload
