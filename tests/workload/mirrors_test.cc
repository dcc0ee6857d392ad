// What a collapsed run plays for the ranks it does not simulate (workload/mirrors.h): with the
// simulated ranks' own communication, the mirrors are exactly the whole job's.
#include "sim/workload/mirrors.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "sim/workload/builder.h"
#include "sim/workload/simulated_ranks.h"
#include "tests/workload/workload_test_util.h"

namespace trainsim::workload {
namespace {

using ::testing::UnorderedElementsAreArray;

// A collective call as the network sees it: (group kind, group index, collective kind, bytes).
using CollectiveCall = std::tuple<int, int32_t, int, double>;
// A send: (source, destination, bytes).
using SendCall = std::tuple<int64_t, int64_t, double>;

// Every distinct collective call and send of `graphs` (of `ranks`), by count of ranks that make it
// (a collective once per member, a send once).
struct Calls {
  std::map<CollectiveCall, int> collectives;
  std::map<SendCall, int> sends;
};

Calls distinct_calls(const std::vector<int64_t>& ranks, const std::vector<Graph>& graphs) {
  Calls calls;
  for (size_t i = 0; i < ranks.size(); ++i) {
    std::set<CollectiveCall> collectives;
    std::set<SendCall> sends;
    for (const Op& op : graphs[i].ops()) {
      if (op.kind == OpKind::kCollective) {
        const GroupId g = op.collective.group;
        collectives.insert(
            {static_cast<int>(g.kind), g.index, static_cast<int>(op.collective.kind), op.bytes});
      } else if (op.kind == OpKind::kSend) {
        sends.insert({ranks[i], op.p2p.peer, op.bytes});
      }
    }
    for (const CollectiveCall& c : collectives) ++calls.collectives[c];
    for (const SendCall& s : sends) ++calls.sends[s];
  }
  return calls;
}

// Every rank's distinct calls against those of the simulated ranks and their mirrors: the same
// collectives (on the same groups) and the same sends.
void expect_mirrors_complete(const config::Scenario& s) {
  const ParallelPlan plan = make_plan(s);
  std::vector<int64_t> everyone(static_cast<size_t>(plan.world_size()));
  for (int64_t r = 0; r < plan.world_size(); ++r) everyone[static_cast<size_t>(r)] = r;
  const Calls full = distinct_calls(everyone, testing::build_all_ranks(s, plan));

  const std::vector<int64_t> simulated = simulated_ranks(s, plan);
  const Calls collapsed = distinct_calls(simulated, build_rank_graphs(s, plan, simulated));
  const Mirrors mirrors(plan);
  std::set<CollectiveCall> played_collectives;
  std::vector<SendCall> played_sends;
  for (const auto& [call, count] : collapsed.collectives) played_collectives.insert(call);
  for (const auto& [call, count] : collapsed.collectives) {
    const auto [kind, index, collective, bytes] = call;
    const GroupId own{static_cast<GroupKind>(kind), index};
    const int64_t rank = *std::find_if(simulated.begin(), simulated.end(), [&](int64_t r) {
      const std::vector<int64_t> m = plan.members(own);
      return std::find(m.begin(), m.end(), r) != m.end();
    });
    for (const Mirror<GroupId>& twin : mirrors.groups(rank, own.kind)) {
      EXPECT_TRUE(played_collectives.insert({kind, twin.of.index, collective, bytes}).second)
          << "group " << twin.of.index << " mirrored twice";
    }
  }
  for (const auto& [call, count] : collapsed.sends) {
    const auto [src, dst, bytes] = call;
    played_sends.push_back(call);
    for (const Mirror<RankPair>& twin : mirrors.sends(src, dst)) {
      played_sends.emplace_back(twin.of.src, twin.of.dst, bytes);
    }
  }
  std::set<CollectiveCall> full_collectives;
  for (const auto& [call, count] : full.collectives) full_collectives.insert(call);
  EXPECT_EQ(played_collectives, full_collectives);
  std::vector<SendCall> full_sends;
  for (const auto& [call, count] : full.sends) full_sends.push_back(call);
  EXPECT_THAT(played_sends, UnorderedElementsAreArray(full_sends));
}

TEST(Mirrors, AreTheWholeJobsCommunicationWithPipelineAndRingAttention) {
  expect_mirrors_complete(testing::make_scenario(
      "gpt3-125m", 8, 1, {.tp = 2, .pp = 2, .dp = 2, .sp = 4, .sequence = config::SequenceParallel::kRing}));
}

TEST(Mirrors, AreTheWholeJobsCommunicationWithExpertParallelism) {
  expect_mirrors_complete(testing::make_scenario(
      "mixtral-8x7b", 16, 1,
      {.tp = 2, .pp = 2, .dp = 4, .ep = 2, .sequence = config::SequenceParallel::kMegatron}));
}

// TP2 x SP2 x DP2 x PP2: rank = tp + 2 sp + 4 dp + 8 pp. Rank 0's tensor- and sequence-parallel peers
// (dp 0) are in step with it; dp 1's ranks are not.
TEST(Mirrors, InStepAreTheRanksOfTheSimulatedRanksDataParallelCoordinate) {
  const ParallelPlan plan = make_plan(testing::make_scenario(
      "gpt3-125m", 8, 1, {.tp = 2, .pp = 2, .dp = 2, .sp = 2, .sequence = config::SequenceParallel::kRing}));
  const Mirrors mirrors(plan);
  std::map<int64_t, bool> ranks;
  for (const Mirror<int64_t>& m : mirrors.ranks(0)) ranks[m.of] = m.in_step;
  EXPECT_EQ(ranks, (std::map<int64_t, bool>{
                       {1, true}, {2, true}, {3, true}, {4, false}, {5, false}, {6, false}, {7, false}}));
  // Stage 1's pipeline sends to stage 0 ... from rank 8's peers.
  std::map<std::pair<int64_t, int64_t>, bool> sends;
  for (const Mirror<RankPair>& m : mirrors.sends(8, 0)) sends[{m.of.src, m.of.dst}] = m.in_step;
  EXPECT_EQ(sends.size(), 7U);
  EXPECT_TRUE((sends[{11, 3}]));
  EXPECT_FALSE((sends[{12, 4}]));
  // The data-parallel groups of stage 0 are those of tp and sp 0..1: all in step (the gradient
  // reduction ends with its slowest); the tensor-parallel groups of dp 1 are not.
  for (const Mirror<GroupId>& g : mirrors.groups(0, GroupKind::kDp)) EXPECT_TRUE(g.in_step);
  EXPECT_EQ(mirrors.groups(0, GroupKind::kDp).size(), 3U);
  int in_step = 0;
  for (const Mirror<GroupId>& g : mirrors.groups(0, GroupKind::kTp)) in_step += g.in_step ? 1 : 0;
  EXPECT_EQ(mirrors.groups(0, GroupKind::kTp).size(), 3U);
  EXPECT_EQ(in_step, 1);  // sp 1 of dp 0
}

// With expert parallelism over two data-parallel coordinates, those ranks meet in every MoE layer's
// all-to-all: in step.
TEST(Mirrors, ExpertParallelPeersAreInStep) {
  const ParallelPlan plan =
      make_plan(testing::make_scenario("mixtral-8x7b", 16, 1, {.tp = 1, .dp = 4, .ep = 2}));
  const Mirrors mirrors(plan);
  std::map<int64_t, bool> ranks;
  for (const Mirror<int64_t>& m : mirrors.ranks(0)) ranks[m.of] = m.in_step;
  EXPECT_EQ(ranks, (std::map<int64_t, bool>{{1, true}, {2, false}, {3, false}}));
}

}  // namespace
}  // namespace trainsim::workload
