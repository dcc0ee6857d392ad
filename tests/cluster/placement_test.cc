// Where jobs without a nodes: list go: the three policies on the free nodes.
#include "sim/cluster/placement.h"

#include <algorithm>
#include <set>

#include <gtest/gtest.h>

namespace trainsim::cluster {
namespace {

using Nodes = std::vector<std::vector<int64_t>>;

TEST(Placement, PackedGivesEachJobTheNextBlockOfFreeNodes) {
  EXPECT_EQ(place(Placement::kPacked, 1, {0, 1, 2, 5, 6, 7, 9}, {2, 0, 3}), (Nodes{{0, 1}, {}, {2, 5, 6}}));
}

TEST(Placement, InterleavedDealsTheFreeNodesInTurn) {
  // Job 0 needs 1 and leaves the round; jobs 1 and 2 go on alternating.
  EXPECT_EQ(place(Placement::kInterleaved, 1, {0, 1, 2, 3, 4, 5, 6}, {1, 3, 2}),
            (Nodes{{0}, {1, 3, 5}, {2, 4}}));
}

TEST(Placement, SpreadSpacesEachJobsNodesOverTheFreeNodes) {
  std::vector<int64_t> free_nodes;
  for (int64_t n = 0; n < 32; ++n) free_nodes.push_back(n);
  EXPECT_EQ(place(Placement::kSpread, 1, free_nodes, {2, 2, 0, 4}),
            (Nodes{{0, 16}, {1, 17}, {}, {2, 9, 18, 25}}));
}

TEST(Placement, RandomIsASeededDrawOfDistinctFreeNodes) {
  std::vector<int64_t> free_nodes;
  for (int64_t n = 0; n < 64; ++n) free_nodes.push_back(2 * n);
  const Nodes a = place(Placement::kRandom, 7, free_nodes, {16, 16, 8});
  EXPECT_EQ(a, place(Placement::kRandom, 7, free_nodes, {16, 16, 8}));
  EXPECT_NE(a, place(Placement::kRandom, 8, free_nodes, {16, 16, 8}));
  EXPECT_NE(a, place(Placement::kPacked, 7, free_nodes, {16, 16, 8}));
  std::set<int64_t> seen;
  for (size_t j = 0; j < a.size(); ++j) {
    EXPECT_EQ(a[j].size(), (std::vector<size_t>{16, 16, 8}[j]));
    EXPECT_TRUE(std::is_sorted(a[j].begin(), a[j].end())) << "ranks fill a job's nodes in ascending order";
    for (const int64_t n : a[j]) {
      EXPECT_TRUE(seen.insert(n).second) << "node " << n << " given twice";
      EXPECT_EQ(n % 2, 0) << "node " << n << " was not free";
    }
  }
  // The draw of a seed is the same on every platform (SplitMix64, Fisher-Yates): pinned here.
  EXPECT_EQ(place(Placement::kRandom, 7, {0, 1, 2, 3, 4, 5, 6, 7}, {3, 2}), (Nodes{{0, 1, 3}, {4, 7}}));
}

TEST(Placement, RefusesMoreNodesThanAreFree) {
  EXPECT_THROW(place(Placement::kPacked, 1, {0, 1}, {2, 1}), std::invalid_argument);
}

}  // namespace
}  // namespace trainsim::cluster
