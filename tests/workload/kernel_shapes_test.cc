// The calls a calibration measures for a scenario are exactly the ones its simulation prices: every
// GEMM, attention kernel, collective, message and copy of every rank's graph (not only the symmetry
// classes' representatives the list is read from) is listed once, and nothing else is.
#include "sim/workload/kernel_shapes.h"

#include <algorithm>
#include <string>

#include <gtest/gtest.h>

#include "sim/workload/builder.h"
#include "tests/workload/workload_test_util.h"

namespace trainsim::workload {
namespace {

using Shapes = KernelShapes;

template <class T>
bool listed(const std::vector<T>& list, const T& item) {
  return std::find(list.begin(), list.end(), item) != list.end();
}

template <class T>
bool unique(const std::vector<T>& list) {
  for (size_t i = 0; i < list.size(); ++i) {
    if (std::find(list.begin() + static_cast<std::ptrdiff_t>(i) + 1, list.end(), list[i]) != list.end()) {
      return false;
    }
  }
  return true;
}

config::Scenario small(std::string_view preset, const testing::PlanSpec& spec, int64_t micro_batches = 2) {
  config::Scenario s = testing::make_scenario(preset, spec.dp * micro_batches, 1, spec);
  s.model.layers = std::max<int64_t>(2 * spec.pp, 2);
  s.model.seq_len = 1024;
  return s;
}

// Every rank's priced calls are listed, and every listed call is some rank's.
void expect_exactly_the_priced_calls(const config::Scenario& s) {
  SCOPED_TRACE(s.name);
  const Shapes shapes = kernel_shapes(s);
  EXPECT_TRUE(unique(shapes.gemms));
  EXPECT_TRUE(unique(shapes.attentions));
  EXPECT_TRUE(unique(shapes.collectives));
  EXPECT_TRUE(unique(shapes.copies));
  const ParallelPlan plan = make_plan(s);
  Shapes seen;  // the union over single ranks, each rank read on its own
  for (const Graph& g : testing::build_all_ranks(s, plan)) {
    const Shapes one = kernel_shapes({g}, plan, s.cluster.topology);
    for (const Shapes::Gemm& x : one.gemms) {
      EXPECT_TRUE(listed(shapes.gemms, x))
          << "rank " << g.info.rank << " gemm " << x.m << "x" << x.n << "x" << x.k;
      if (!listed(seen.gemms, x)) seen.gemms.push_back(x);
    }
    for (const Shapes::Attention& x : one.attentions) {
      EXPECT_TRUE(listed(shapes.attentions, x)) << "rank " << g.info.rank << " attention q_len " << x.q_len;
      if (!listed(seen.attentions, x)) seen.attentions.push_back(x);
    }
    for (const Shapes::Collective& x : one.collectives) {
      EXPECT_TRUE(listed(shapes.collectives, x))
          << "rank " << g.info.rank << " collective of " << x.bytes << " B";
      if (!listed(seen.collectives, x)) seen.collectives.push_back(x);
    }
    for (const Shapes::Copy& x : one.copies) {
      EXPECT_TRUE(listed(shapes.copies, x)) << "rank " << g.info.rank << " copy of " << x.bytes << " B";
      if (!listed(seen.copies, x)) seen.copies.push_back(x);
    }
  }
  EXPECT_EQ(seen.gemms.size(), shapes.gemms.size());
  EXPECT_EQ(seen.attentions.size(), shapes.attentions.size());
  EXPECT_EQ(seen.collectives.size(), shapes.collectives.size());
  EXPECT_EQ(seen.copies.size(), shapes.copies.size());
}

TEST(KernelShapes, ListEveryRanksPricedCallsOnce) {
  testing::PlanSpec tp_pp;  // 2 nodes: tp within a node, pp and dp across
  tp_pp.tp = 4;
  tp_pp.pp = 2;
  tp_pp.dp = 2;
  tp_pp.sequence = config::SequenceParallel::kMegatron;
  expect_exactly_the_priced_calls(small("llama3-8b", tp_pp, 4));

  testing::PlanSpec zero3;
  zero3.dp = 16;
  zero3.zero = 3;
  expect_exactly_the_priced_calls(small("gpt3-1.3b", zero3));

  testing::PlanSpec experts;
  experts.dp = 8;
  experts.ep = 4;
  expect_exactly_the_priced_calls(small("mixtral-8x7b", experts));

  testing::PlanSpec fpdt;
  fpdt.sp = 4;
  fpdt.sequence = config::SequenceParallel::kFpdt;
  config::Scenario long_context = small("llama3-8b", fpdt, 1);
  long_context.model.seq_len = 32768;
  long_context.parallelism.fpdt.chunk_tokens = 4096;
  expect_exactly_the_priced_calls(long_context);

  testing::PlanSpec ring;
  ring.sp = 4;
  ring.dp = 2;
  ring.sequence = config::SequenceParallel::kRing;
  expect_exactly_the_priced_calls(small("llama3-8b", ring));
}

TEST(KernelShapes, ExpertGemmsAreStackedAndLatentAttentionKeepsItsValueWidth) {
  testing::PlanSpec experts;
  experts.dp = 8;
  experts.ep = 4;  // two of the eight experts per GPU, in one grouped GEMM
  const config::Scenario moe = small("mixtral-8x7b", experts);
  const ParallelPlan plan = make_plan(moe);
  const Graph g = build_rank_graph(moe, plan, 0);
  const Shapes shapes = kernel_shapes(moe);
  int grouped = 0;
  for (const Op& op : g.ops()) {
    if (op.kind != OpKind::kGemm || op.gemm.groups == 1) continue;
    ++grouped;
    EXPECT_TRUE(listed(shapes.gemms, {op.dtype, op.gemm.groups * op.gemm.m, op.gemm.n, op.gemm.k}));
  }
  EXPECT_GT(grouped, 0) << "mixtral on ep 4 has no grouped expert GEMM";
  EXPECT_TRUE(
      std::any_of(shapes.collectives.begin(), shapes.collectives.end(), [](const Shapes::Collective& c) {
        return c.kind == config::CollectiveKind::kAllToAll && c.ranks == 4;
      }));

  testing::PlanSpec tp;
  tp.tp = 4;
  config::Scenario mla = small("deepseek-v2", tp, 1);
  mla.model.moe = {};
  const Shapes latent = kernel_shapes(mla);
  ASSERT_FALSE(latent.attentions.empty());
  for (const Shapes::Attention& a : latent.attentions) {
    EXPECT_EQ(a.head_dim, mla.model.head_dim + mla.model.mla.rope_head_dim);
    EXPECT_EQ(a.value_dim, mla.model.mla.v_head_dim);
    EXPECT_NE(a.value_dim, a.head_dim);
  }
}

TEST(KernelShapes, GroupsAreMarkedWithinOrAcrossNodes) {
  testing::PlanSpec spec;  // tp 8 fills a node of 8; dp 2 pairs GPU r with GPU r + 8 on the next node
  spec.tp = 8;
  spec.dp = 2;
  const Shapes shapes = kernel_shapes(small("llama3-8b", spec));
  bool tp_seen = false, dp_seen = false;
  for (const Shapes::Collective& c : shapes.collectives) {
    if (c.ranks == 8) {
      tp_seen = true;
      EXPECT_TRUE(c.one_node);
    } else if (c.ranks == 2) {
      dp_seen = true;
      EXPECT_FALSE(c.one_node);
    }
  }
  EXPECT_TRUE(tp_seen);
  EXPECT_TRUE(dp_seen);
}

TEST(KernelShapes, AnUnfusedAttentionIsMeasuredAsItsBatchedGemms) {
  testing::PlanSpec spec;
  config::Scenario s = small("gpt3-125m", spec, 1);
  s.model.attention = config::AttentionKernel::kUnfused;
  const Shapes shapes = kernel_shapes(s);
  EXPECT_TRUE(shapes.attentions.empty());
  const int64_t rows = s.model.heads * s.model.seq_len;  // micro-batch 1
  EXPECT_TRUE(listed(shapes.gemms, {s.training.dtype, rows, s.model.seq_len, s.model.head_dim}));
}

}  // namespace
}  // namespace trainsim::workload
