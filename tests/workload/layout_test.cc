// Layer partition over (virtual) pipeline stages and per-rank parameter counts.
#include "sim/workload/layout.h"

#include <numeric>

#include <gtest/gtest.h>

#include "sim/analytic/params.h"
#include "sim/workload/errors.h"
#include "sim/workload/shapes.h"
#include "tests/workload/workload_test_util.h"

namespace trainsim::workload {
namespace {

TEST(PartitionLayers, EvenSplit) {
  const StageLayout l = partition_layers(96, 8, 3);
  ASSERT_EQ(l.layer_count.size(), 24u);
  for (int64_t c : l.layer_count) EXPECT_EQ(c, 4);
  EXPECT_EQ(l.first_layer[5], 20);
  EXPECT_TRUE(l.has_embedding(l.virtual_stage(0, 0)));
  EXPECT_TRUE(l.has_head(l.virtual_stage(7, 2)));
  EXPECT_FALSE(l.has_head(l.virtual_stage(7, 1)));
}

TEST(PartitionLayers, SurplusComesOffTheLastAndFirstStages) {
  // Llama 3 405B: 126 layers on 16 stages, one layer fewer on the first and the last.
  const StageLayout l = partition_layers(126, 16, 1);
  EXPECT_EQ(l.layer_count.front(), 7);
  EXPECT_EQ(l.layer_count.back(), 7);
  for (size_t v = 1; v + 1 < l.layer_count.size(); ++v) EXPECT_EQ(l.layer_count[v], 8);
  EXPECT_EQ(std::accumulate(l.layer_count.begin(), l.layer_count.end(), int64_t{0}), 126);
  const StageLayout three = partition_layers(9, 4, 1);
  EXPECT_EQ(three.layer_count, (std::vector<int64_t>{2, 3, 2, 2}));
}

// Megatron-Core's first and last stage layer counts: the other stages share the rest evenly.
TEST(PartitionLayers, FirstAndLastStagesAsGiven) {
  EXPECT_EQ(partition_layers_with_ends(126, 16, 7, 7).layer_count,
            (std::vector<int64_t>{7, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 7}));
  EXPECT_EQ(partition_layers_with_ends(61, 4, 16, 0).layer_count, (std::vector<int64_t>{16, 15, 15, 15}));
  EXPECT_EQ(partition_layers_with_ends(10, 2, 4, 6).layer_count, (std::vector<int64_t>{4, 6}));
  const StageLayout l = partition_layers_with_ends(30, 3, 0, 6);
  EXPECT_EQ(l.layer_count, (std::vector<int64_t>{12, 12, 6}));
  EXPECT_EQ(l.first_layer, (std::vector<int64_t>{0, 12, 24}));
}

// ZB-V: stage s runs virtual stages s and 2pp - 1 - s, so the first stage holds both ends of the
// model and a tied LM head reuses the embedding there.
TEST(PartitionLayers, VShapeTurnsOnTheLastStage) {
  const StageLayout l = partition_layers(16, 4, 2, true);
  EXPECT_EQ(l.virtual_stage(0, 1), 7);
  EXPECT_EQ(l.virtual_stage(3, 0), 3);
  EXPECT_EQ(l.virtual_stage(3, 1), 4);
  for (int64_t v = 0; v < 8; ++v) EXPECT_EQ(l.virtual_stage(l.stage_of(v), v < 4 ? 0 : 1), v) << v;
  EXPECT_TRUE(l.has_head(l.virtual_stage(0, 1)));

  testing::PlanSpec spec;
  spec.pp = 2;
  spec.vpp = 2;
  spec.schedule = config::Schedule::kZbV;
  config::Scenario s = testing::make_scenario("megatron-1.7b", 8, 1, spec);
  ASSERT_TRUE(s.model.tied_embeddings);
  const RankShapes shapes = derive_shapes(s, make_plan(s));
  const StageLayout layout = partition_layers(shapes);
  EXPECT_TRUE(layout.v_shape);
  const LayerParams p = layer_params(shapes);
  const int64_t final_norm = shapes.hidden * 2;  // LayerNorm weight and bias
  EXPECT_EQ(stage_params(shapes, layout, 0), (layout.layer_count[0] + layout.layer_count[3]) * p.total() +
                                                 embedding_params(shapes) + final_norm);
  EXPECT_EQ(model_params(shapes, layout), analytic::parameter_count(s.model).total);
}

TEST(StageParams, RanksHoldTheModelOnceAcrossShards) {
  for (const char* preset : {"megatron-7.5b", "llama3-8b", "gpt-neox-2.7b"}) {
    testing::PlanSpec spec;
    spec.tp = 4;
    spec.pp = 2;
    config::Scenario s = testing::make_scenario(preset, 8, 1, spec);
    const ParallelPlan plan = make_plan(s);
    const RankShapes shapes = derive_shapes(s, plan);
    const StageLayout layout = partition_layers(shapes.layers, shapes.pp, shapes.vpp);
    EXPECT_EQ(model_params(shapes, layout), analytic::parameter_count(s.model).total) << preset;
    // Stage 0 holds the embedding shard, the last stage the final norm (+ LM head).
    const LayerParams p = layer_params(shapes);
    EXPECT_EQ(stage_params(shapes, layout, 0), layout.layer_count[0] * p.total() + embedding_params(shapes))
        << preset;
    EXPECT_EQ(stage_params(shapes, layout, 1), layout.layer_count[1] * p.total() + head_params(shapes))
        << preset;
  }
}

TEST(DeriveShapes, RejectsPlansTheBuilderCannotExpress) {
  const auto rejects = [](config::Scenario s, const std::string& setting) {
    try {
      derive_shapes(s, make_plan(s));
      ADD_FAILURE() << "accepted; expected an error on " << setting;
    } catch (const PlanError& e) {
      EXPECT_EQ(e.setting(), setting) << e.what();
    }
  };
  testing::PlanSpec tp5;
  tp5.tp = 5;  // 24 heads
  rejects(testing::make_scenario("megatron-1.7b", 8, 1, tp5), "parallelism.tp");
  testing::PlanSpec ulysses;
  ulysses.sp = 4;
  ulysses.tp = 2;
  ulysses.sequence = config::SequenceParallel::kUlysses;
  rejects(testing::make_scenario("llama3-8b", 4, 1, ulysses), "parallelism.tp");
  testing::PlanSpec fpdt_pp;
  fpdt_pp.sp = 2;
  fpdt_pp.pp = 2;
  fpdt_pp.sequence = config::SequenceParallel::kFpdt;
  config::Scenario fpdt = testing::make_scenario("llama3-8b", 4, 1, fpdt_pp);
  fpdt.parallelism.fpdt.chunk_tokens = 2048;
  rejects(fpdt, "parallelism.pp");
  testing::PlanSpec zero3_pp;
  zero3_pp.pp = 2;
  zero3_pp.zero = 3;
  rejects(testing::make_scenario("llama3-8b", 4, 1, zero3_pp), "parallelism.zero_stage");
  testing::PlanSpec interleaved;
  interleaved.pp = 4;
  interleaved.vpp = 2;
  interleaved.schedule = config::Schedule::kInterleaved;
  rejects(testing::make_scenario("megatron-1.7b", 6, 1, interleaved), "training.global_batch");
  testing::PlanSpec sp_without_scheme;
  sp_without_scheme.sp = 2;
  rejects(testing::make_scenario("llama3-8b", 4, 1, sp_without_scheme), "parallelism.sp");
}

}  // namespace
}  // namespace trainsim::workload
