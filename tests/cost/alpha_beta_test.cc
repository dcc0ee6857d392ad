// The ideal network's collective times: one tier when a group is on one node; across nodes, rings
// through every member's NIC share and all-to-alls through their own.
#include "sim/cost/alpha_beta.h"

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "sim/config/loader.h"
#include "sim/cost/collective.h"

namespace trainsim::cost {
namespace {

using workload::CollectiveKind;

// 8 GPUs per node on 300 GB/s NVSwitch links, each GPU with a 25 GB/s share of the NICs.
IdealTiers two_tiers() {
  IdealTiers t;
  t.intra = {300e9, 1e-6, 25e9, 5e-6};
  t.inter = {25e9, 4e-6, 25e9, 5e-6};
  t.gpus_per_node = 8;
  return t;
}

std::vector<int64_t> ranks(int64_t first, int64_t count, int64_t stride = 1) {
  std::vector<int64_t> out;
  for (int64_t i = 0; i < count; ++i) out.push_back(first + i * stride);
  return out;
}

double time_s(CollectiveKind kind, const std::vector<int64_t>& members, double bytes) {
  return collective_s(kind, static_cast<int64_t>(members.size()), bytes, group_links(two_tiers(), members));
}

// Across nodes a ring runs under NCCL's fastest protocol (sim/cost/nccl_protocol.h). Simple, which
// large collectives take: 8.4 us once and, per step, 14 us through the network on the lap's edges
// between nodes (one per node) and 3.4 us over NVLink on the others (both above these links' 4 and
// 1 us).
double simple_latency_s(int64_t steps, double members, double nodes) {
  return 8.4e-6 + static_cast<double>(steps) * (nodes * 14e-6 + (members - nodes) * 3.4e-6) / members;
}

TEST(AlphaBeta, RingsAcrossNodesRunAChannelThroughEveryMembersNic) {
  const double bytes = 1e9;
  // One node: NVSwitch, no protocol cost (calibration holds what NCCL does inside a node).
  EXPECT_DOUBLE_EQ(time_s(CollectiveKind::kAllGather, ranks(0, 8), bytes),
                   7.0 / 8 * bytes / 300e9 + 7 * 1e-6);
  // Two nodes, 8 members each: 8 NIC shares (200 GB/s), below NVSwitch.
  EXPECT_DOUBLE_EQ(time_s(CollectiveKind::kAllGather, ranks(0, 16), bytes),
                   15.0 / 16 * bytes / 200e9 + simple_latency_s(15, 16, 2));
  // Four nodes: the ring all-reduce (the tree would carry 2S/8 through each NIC).
  EXPECT_DOUBLE_EQ(time_s(CollectiveKind::kAllReduce, ranks(0, 32), bytes),
                   2 * 31.0 / 32 * bytes / 200e9 + simple_latency_s(62, 32, 4));
  // Two nodes: the ring too, as NCCL's tuner picks it (nccl_all_reduce_uses_tree), although a tree
  // would carry only S/8 through each NIC; a small one takes the tree, each NIC carrying S/8 (root of
  // one tree, leaf of the other) and each NVLink 2S x 7/8, under LL (6.8 us once, per step the
  // longer of its 1.08 us and the link's in the node, 5 us between them) at 0.92/3.8 of the
  // bandwidth.
  EXPECT_DOUBLE_EQ(time_s(CollectiveKind::kAllReduce, ranks(0, 16), bytes),
                   2 * 15.0 / 16 * bytes / 200e9 + simple_latency_s(30, 16, 2));
  const double small = 4096;
  EXPECT_DOUBLE_EQ(time_s(CollectiveKind::kAllReduce, ranks(0, 16), small),
                   6.8e-6 + 2 * (7 * std::max(1e-6, 1.08e-6) + 5e-6) +
                       std::max(small / 8 / 25e9, 2 * small * 7 / 8 / 300e9) / (0.92 / 3.8));
  // One member per node (a data-parallel group beside tp 8): one NIC share.
  EXPECT_DOUBLE_EQ(time_s(CollectiveKind::kReduceScatter, ranks(0, 4, 8), bytes),
                   3.0 / 4 * bytes / 25e9 + simple_latency_s(3, 4, 4));
  // The node with the fewest members bounds the ring: 2 on node 0, 1 on node 1.
  EXPECT_DOUBLE_EQ(time_s(CollectiveKind::kAllGather, {0, 1, 8}, bytes),
                   2.0 / 3 * bytes / 25e9 + simple_latency_s(2, 3, 2));
}

// A small all-gather across nodes takes LL: half the bandwidth, 6.6 us once and per step the longer
// of LL's 2.7 us and the link's 4 us; over 1,024 members, one per node, 1,023 such steps.
TEST(AlphaBeta, SmallCollectivesAcrossNodesTakeTheLowLatencyProtocol) {
  const double bytes = 1e3;
  EXPECT_DOUBLE_EQ(time_s(CollectiveKind::kAllGather, ranks(0, 4, 8), bytes),
                   6.6e-6 + 3.0 / 4 * bytes / (0.5 * 25e9) + 3 * 4e-6);
  EXPECT_NEAR(time_s(CollectiveKind::kAllGather, ranks(0, 1024, 8), bytes),
              6.6e-6 + 1023.0 / 1024 * bytes / (0.5 * 25e9) + 1023 * 4e-6, 1e-12);
}

// A small all-reduce over many nodes takes NCCL's tree, whose latency grows with the log of the
// nodes: over 1,024 nodes, LL's 6.8 us once and twice 10 levels of its 5 us network step, and
// 2S through the NIC at 0.92/3.8 of its bandwidth, against 2,046 ring steps.
TEST(AlphaBeta, SmallAllReducesOverManyNodesTakeTheTree) {
  const double bytes = 1e3;
  EXPECT_NEAR(time_s(CollectiveKind::kAllReduce, ranks(0, 1024, 8), bytes),
              6.8e-6 + 2 * 10 * 5e-6 + 2 * bytes / 25e9 / (0.92 / 3.8), 1e-12);
  EXPECT_LT(time_s(CollectiveKind::kAllReduce, ranks(0, 1024, 8), bytes),
            time_s(CollectiveKind::kAllGather, ranks(0, 1024, 8), bytes));
}

// The ideal network's closed forms agree with the SimGrid planner's own estimate of the schedule
// it picks (auto: ring or tree, under NCCL's protocols) for all-reduces across nodes, from
// latency-bound to bandwidth-bound sizes.
TEST(AlphaBeta, AllReducesAcrossNodesAgreeWithThePlanner) {
  for (const int per_node : {1, 8}) {
    for (const int nodes : {2, 16, 128}) {
      CollectiveModel model;
      model.topology.gpu_count = nodes * 8;
      model.topology.gpus_per_node = 8;
      model.topology.intra_bandwidth_bytes_per_s = 300e9;
      model.topology.inter_bandwidth_bytes_per_s = 25e9;
      model.topology.path_latency_s = [](int a, int b) { return a / 8 == b / 8 ? 1e-6 : 4e-6; };
      std::vector<int> gpus;
      std::vector<int64_t> members;
      for (int node = 0; node < nodes; ++node) {
        for (int i = 0; i < per_node; ++i) {
          gpus.push_back(8 * node + i);
          members.push_back(8 * node + i);
        }
      }
      for (const double bytes : {1e3, 1e6, 1e9}) {
        SCOPED_TRACE(fmt::format("{} nodes x {}, {} B", nodes, per_node, bytes));
        const double planned = estimate_duration_s(
            plan_collective(config::CollectiveKind::kAllReduce, gpus, bytes, model), model);
        EXPECT_NEAR(time_s(CollectiveKind::kAllReduce, members, bytes), planned, 0.1 * planned);
      }
    }
  }
}

TEST(AlphaBeta, AllToAllSendsItsOffNodeShareThroughItsOwnNic) {
  const double bytes = 1e9;
  // 16 members on two nodes: 7/16 of the buffer stays in the node, 8/16 crosses at 25 GB/s.
  EXPECT_DOUBLE_EQ(time_s(CollectiveKind::kAllToAll, ranks(0, 16), bytes),
                   8.0 / 16 * bytes / 25e9 + 15 * 4e-6);
  EXPECT_DOUBLE_EQ(time_s(CollectiveKind::kAllToAll, ranks(0, 8), bytes), 7.0 / 8 * bytes / 300e9 + 7 * 1e-6);
}

}  // namespace
}  // namespace trainsim::cost

namespace trainsim::cost {
namespace {

// A stack's collective fractions scale the bandwidth of each tier (and of slow NICs), not latencies
// or host copies.
TEST(AlphaBeta, StackCollectiveFractionsScaleEachTier) {
  const std::filesystem::path root = std::filesystem::path(TRAINSIM_SOURCE_DIR);
  config::Scenario s = config::load_scenario(root / "scenarios/06-llama3-70b-256xh100.yaml");
  const IdealTiers hardware = ideal_tiers(s);
  config::StackProfile& stack = s.cluster.hardware.stack.emplace();
  stack.parameters[config::StackParameter::kCollectiveFractionNvlink] = 0.5;
  stack.parameters[config::StackParameter::kCollectiveFractionNetwork] = 0.8;
  const IdealTiers stacked = ideal_tiers(s);
  EXPECT_DOUBLE_EQ(stacked.intra.bandwidth_bytes_per_s, 0.5 * hardware.intra.bandwidth_bytes_per_s);
  EXPECT_DOUBLE_EQ(stacked.inter.bandwidth_bytes_per_s, 0.8 * hardware.inter.bandwidth_bytes_per_s);
  EXPECT_DOUBLE_EQ(stacked.inter.latency_s, hardware.inter.latency_s);
  EXPECT_DOUBLE_EQ(stacked.intra.copy_bandwidth_bytes_per_s, hardware.intra.copy_bandwidth_bytes_per_s);
}

}  // namespace
}  // namespace trainsim::cost
