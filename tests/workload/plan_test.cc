// ParallelPlan: rank <-> coordinates, process groups and symmetry classes.
#include "sim/workload/plan.h"

#include <algorithm>
#include <set>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "sim/config/presets.h"
#include "sim/workload/errors.h"

namespace trainsim::workload {
namespace {

config::Parallelism degrees(int64_t tp, int64_t sp, int64_t dp, int64_t pp,
                            std::string order = "tp-sp-dp-pp") {
  config::Parallelism p;
  p.tp = tp;
  p.sp = sp;
  p.dp = dp;
  p.pp = pp;
  p.order = std::move(order);
  return p;
}

TEST(ParallelPlan, DefaultOrderIsMegatronTensorInnermost) {
  const ParallelPlan plan(degrees(4, 2, 3, 2));
  EXPECT_EQ(plan.world_size(), 48);
  // Ranks 0..3 form the first tensor-parallel group; rank 4 starts the next sequence-parallel slot.
  EXPECT_EQ(plan.members(plan.group_of(0, GroupKind::kTp)), (std::vector<int64_t>{0, 1, 2, 3}));
  EXPECT_EQ(plan.coords(5), (Coords{{1, 1, 0, 0}}));
  EXPECT_EQ(plan.coords(8), (Coords{{0, 0, 1, 0}}));
  EXPECT_EQ(plan.coords(24), (Coords{{0, 0, 0, 1}}));
  EXPECT_EQ(plan.members(plan.group_of(0, GroupKind::kPp)), (std::vector<int64_t>{0, 24}));
  EXPECT_EQ(plan.members(plan.group_of(1, GroupKind::kDp)), (std::vector<int64_t>{1, 9, 17}));
  EXPECT_EQ(plan.members(plan.group_of(0, GroupKind::kDpSp)), (std::vector<int64_t>{0, 4, 8, 12, 16, 20}));
}

TEST(ParallelPlan, CoordinatesRoundTripForEveryOrder) {
  for (const char* order : {"tp-sp-dp-pp", "pp-dp-sp-tp", "dp-tp-pp-sp"}) {
    const ParallelPlan plan(degrees(2, 3, 2, 2, order));
    std::set<std::array<int64_t, kAxisCount>> seen;
    for (int64_t r = 0; r < plan.world_size(); ++r) {
      const Coords c = plan.coords(r);
      EXPECT_EQ(plan.rank_of(c), r) << order;
      seen.insert(c.at);
    }
    EXPECT_EQ(static_cast<int64_t>(seen.size()), plan.world_size()) << order;
  }
  // With pp innermost, consecutive ranks are consecutive pipeline stages.
  const ParallelPlan pp_inner(degrees(2, 1, 2, 4, "pp-tp-sp-dp"));
  EXPECT_EQ(pp_inner.members(pp_inner.group_of(0, GroupKind::kPp)), (std::vector<int64_t>{0, 1, 2, 3}));
}

// Every rank is in exactly one group of each kind, at the position rank_in_group says.
void expect_groups_partition_the_ranks(const ParallelPlan& plan, std::initializer_list<GroupKind> kinds) {
  for (GroupKind kind : kinds) {
    std::vector<int> covered(plan.world_size(), 0);
    for (int32_t g = 0; g < plan.group_count(kind); ++g) {
      const std::vector<int64_t> members = plan.members({kind, g});
      ASSERT_EQ(static_cast<int64_t>(members.size()), plan.group_size(kind));
      for (size_t i = 0; i < members.size(); ++i) {
        ++covered[members[i]];
        EXPECT_EQ(plan.group_of(members[i], kind), (GroupId{kind, g}));
        EXPECT_EQ(plan.rank_in_group(members[i], kind), static_cast<int64_t>(i));
      }
    }
    for (int c : covered) EXPECT_EQ(c, 1) << to_string(kind);
  }
}

TEST(ParallelPlan, GroupsPartitionTheRanksAndAgreeWithRankInGroup) {
  expect_groups_partition_the_ranks(
      ParallelPlan(degrees(2, 2, 3, 2, "sp-dp-tp-pp")),
      {GroupKind::kTp, GroupKind::kSp, GroupKind::kDp, GroupKind::kPp, GroupKind::kDpSp, GroupKind::kWorld});
}

TEST(ParallelPlan, ExpertGroupsSplitTheDataParallelAxis) {
  config::Parallelism p = degrees(2, 1, 8, 2);
  p.ep = 4;
  const ParallelPlan plan(p);
  EXPECT_EQ(plan.ep(), 4);
  // Data-parallel ranks of tp rank 1, stage 0: 1, 3, 5, ..., 15. Experts are spread over 4
  // consecutive ones; the ranks 4 apart in dp hold the same experts.
  EXPECT_EQ(plan.members(plan.group_of(1, GroupKind::kEp)), (std::vector<int64_t>{1, 3, 5, 7}));
  EXPECT_EQ(plan.members(plan.group_of(11, GroupKind::kEp)), (std::vector<int64_t>{9, 11, 13, 15}));
  EXPECT_EQ(plan.members(plan.group_of(3, GroupKind::kEdp)), (std::vector<int64_t>{3, 11}));
  EXPECT_EQ(plan.members(plan.group_of(17, GroupKind::kEdp)), (std::vector<int64_t>{17, 25}));
  EXPECT_EQ(plan.group_size(GroupKind::kEdpSp), 2);
  // With ep 1 the expert-data-parallel groups are the data-parallel ones.
  const ParallelPlan dense(degrees(2, 2, 3, 2, "sp-dp-tp-pp"));
  for (int64_t r = 0; r < dense.world_size(); ++r) {
    EXPECT_EQ(dense.members(dense.group_of(r, GroupKind::kEdpSp)),
              dense.members(dense.group_of(r, GroupKind::kDpSp)));
    EXPECT_EQ(dense.group_size(GroupKind::kEp), 1);
  }
}

TEST(ParallelPlan, FoldedExpertGroupsTakeTheTensorParallelRanksFirst) {
  // tp 4 with expert_tp 2: the two halves of each tp group are expert tensor-parallel groups, and the
  // expert group (ep 8) takes one rank of each half (tp coordinates 0 and 2), then 4 dp coordinates.
  config::Parallelism p = degrees(4, 1, 4, 2);
  p.ep = 8;
  p.expert_tp = 2;
  const ParallelPlan plan(p);
  EXPECT_EQ(plan.ep(), 8);
  EXPECT_EQ(plan.expert_tp(), 2);
  EXPECT_EQ(plan.members(plan.group_of(0, GroupKind::kEtp)), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(plan.members(plan.group_of(7, GroupKind::kEtp)), (std::vector<int64_t>{6, 7}));
  EXPECT_EQ(plan.members(plan.group_of(1, GroupKind::kEp)),
            (std::vector<int64_t>{1, 3, 5, 7, 9, 11, 13, 15}));
  EXPECT_EQ(plan.group_size(GroupKind::kEdp), 1);  // every expert shard lives once per stage
  EXPECT_EQ(plan.members(plan.group_of(16, GroupKind::kTp)), (std::vector<int64_t>{16, 17, 18, 19}));
  // expert_tp 1 and ep 2 < tp 4: the expert group is two tp neighbours; the other tp pairs and every
  // dp coordinate hold the same experts.
  p.ep = 2;
  p.expert_tp = 1;
  const ParallelPlan small(p);
  EXPECT_EQ(small.members(small.group_of(5, GroupKind::kEp)), (std::vector<int64_t>{4, 5}));
  EXPECT_EQ(small.members(small.group_of(1, GroupKind::kEdp)),
            (std::vector<int64_t>{1, 3, 5, 7, 9, 11, 13, 15}));
  EXPECT_EQ(small.group_size(GroupKind::kEtp), 1);
  for (const char* order : {"tp-sp-dp-pp", "dp-pp-sp-tp", "sp-tp-pp-dp"}) {
    config::Parallelism q = degrees(4, 2, 6, 2, order);
    q.ep = 6;
    q.expert_tp = 2;
    SCOPED_TRACE(order);
    expect_groups_partition_the_ranks(ParallelPlan(q), {GroupKind::kEtp, GroupKind::kEp, GroupKind::kEdp,
                                                        GroupKind::kEdpSp, GroupKind::kTp, GroupKind::kDp});
  }
}

TEST(ParallelPlan, ExpertGroupsPartitionTheRanksInEveryOrder) {
  for (const char* order : {"tp-sp-dp-pp", "dp-pp-sp-tp", "sp-tp-pp-dp"}) {
    config::Parallelism p = degrees(2, 2, 6, 2, order);
    p.ep = 3;
    const ParallelPlan plan(p);
    SCOPED_TRACE(order);
    expect_groups_partition_the_ranks(plan,
                                      {GroupKind::kEp, GroupKind::kEdp, GroupKind::kEdpSp, GroupKind::kDp});
    // An expert group and an expert-data-parallel group meet in exactly one rank.
    const int64_t r = 7;
    const std::vector<int64_t> ep = plan.members(plan.group_of(r, GroupKind::kEp));
    for (const int64_t member : plan.members(plan.group_of(r, GroupKind::kEdp))) {
      EXPECT_EQ(std::count(ep.begin(), ep.end(), member), member == r ? 1 : 0) << order;
    }
  }
}

TEST(ParallelPlan, EmbeddingGroupJoinsFirstAndLastStage) {
  const ParallelPlan plan(degrees(2, 1, 2, 4));
  EXPECT_EQ(plan.members(plan.group_of(1, GroupKind::kEmbedding)), (std::vector<int64_t>{1, 13}));
  EXPECT_EQ(plan.group_of(13, GroupKind::kEmbedding), plan.group_of(1, GroupKind::kEmbedding));
  EXPECT_DEATH(plan.group_of(5, GroupKind::kEmbedding), "no embedding group");
}

TEST(ParallelPlan, OneSymmetryClassPerStage) {
  const ParallelPlan plan(degrees(8, 16, 8, 16));
  const std::vector<SymmetryClass> classes = plan.symmetry_classes();
  ASSERT_EQ(classes.size(), 16u);
  for (const SymmetryClass& c : classes) {
    EXPECT_EQ(c.size, 1024);
    EXPECT_EQ(plan.coords(c.representative), (Coords{{0, 0, 0, c.stage}}));
    EXPECT_EQ(plan.class_of(c.representative), c.id);
  }
  const ParallelPlan small(degrees(2, 1, 2, 2));
  EXPECT_EQ(small.class_members(1), (std::vector<int64_t>{4, 5, 6, 7}));
}

// make_plan refuses a scenario that breaks a plan rule, with the rule, the key and the message.
TEST(ParallelPlan, MakePlanRefusesABrokenRule) {
  config::Scenario s;
  s.model = config::find_model_preset("llama3-8b")->model;
  s.parallelism = degrees(2, 1, 2, 2);
  s.cluster.gpus = 16;
  try {
    make_plan(s);
    FAIL() << "expected PlanError";
  } catch (const PlanError& e) {
    EXPECT_EQ(e.rule(), "degrees-multiply-to-gpus");
    EXPECT_EQ(e.setting(), "parallelism.dp");
    EXPECT_THAT(e.what(), ::testing::StartsWith("parallelism.dp: tp·pp·dp·sp = 2·2·2·1 = 8 GPUs but "
                                                "cluster.gpus is 16"));
  }
  s.cluster.gpus = 0;  // a scenario built in code may leave the GPU count open
  EXPECT_EQ(make_plan(s).world_size(), 8);
}

}  // namespace
}  // namespace trainsim::workload
