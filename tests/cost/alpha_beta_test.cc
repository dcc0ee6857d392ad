// The ideal network's collective times: one tier when a group is on one node; across nodes, rings
// through every member's NIC share and all-to-alls through their own.
#include "sim/cost/alpha_beta.h"

#include <filesystem>

#include <gtest/gtest.h>

#include "sim/config/loader.h"

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

TEST(AlphaBeta, RingsAcrossNodesRunAChannelThroughEveryMembersNic) {
  const double bytes = 1e9;
  // One node: NVSwitch.
  EXPECT_DOUBLE_EQ(time_s(CollectiveKind::kAllGather, ranks(0, 8), bytes),
                   7.0 / 8 * bytes / 300e9 + 7 * 1e-6);
  // Two nodes, 8 members each: 8 NIC shares (200 GB/s), below NVSwitch.
  EXPECT_DOUBLE_EQ(time_s(CollectiveKind::kAllGather, ranks(0, 16), bytes),
                   15.0 / 16 * bytes / 200e9 + 15 * 4e-6);
  EXPECT_DOUBLE_EQ(time_s(CollectiveKind::kAllReduce, ranks(0, 16), bytes),
                   2 * 15.0 / 16 * bytes / 200e9 + 2 * 15 * 4e-6);
  // One member per node (a data-parallel group beside tp 8): one NIC share.
  EXPECT_DOUBLE_EQ(time_s(CollectiveKind::kReduceScatter, ranks(0, 4, 8), bytes),
                   3.0 / 4 * bytes / 25e9 + 3 * 4e-6);
  // The node with the fewest members bounds the ring: 2 on node 0, 1 on node 1.
  EXPECT_DOUBLE_EQ(time_s(CollectiveKind::kAllGather, {0, 1, 8}, bytes), 2.0 / 3 * bytes / 25e9 + 2 * 4e-6);
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
