// A point's scenario and its evaluation: every setting applied, paths relative to the sweep file,
// and a point's own problems as results with a status and a located reason.
#include "sim/sweep/evaluate.h"

#include <cmath>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "sim/config/loader.h"
#include "tests/sweep/sweep_test_util.h"

namespace trainsim::sweep {
namespace {

using ::testing::HasSubstr;
using testing::ScratchDir;
using ::testing::StartsWith;
using testing::write_file;

TEST(PointScenario, EverySettingOfEverySectionApplies) {
  ScratchDir dir;
  const SweepFile s = load_sweep(write_file(dir, "s.yaml", R"(schema_version: 1
base: $SCENARIOS/01-gpt3-1.3b-dp8.yaml
set: {parallelism.dp_bucket: 50MiB, cluster.gpus: 8}
axes:
  - {key: model.seq_len, values: [1Ki]}
  - {key: training.micro_batch, values: [2]}
  - {key: parallelism.zero_stage, values: [1]}
  - {key: parallelism.recompute, values: [full]}
  - {key: parallelism.overlap_grad_reduce, values: [false]}
  - {key: training.global_batch, values: [32]}
)"));
  const ExpandedSweep e = expand(s);
  const Point& p = e.points.at(0);
  const config::Scenario sc = load_point_scenario(s, p.settings(s));
  EXPECT_EQ(sc.model.seq_len, 1024);
  EXPECT_EQ(sc.training.micro_batch, 2);
  EXPECT_EQ(sc.training.global_batch, 32);
  EXPECT_EQ(sc.parallelism.zero_stage, 1);
  EXPECT_EQ(sc.parallelism.recompute, config::Recompute::kFull);
  EXPECT_FALSE(sc.overlap_grad_reduce());
  EXPECT_EQ(sc.dp_bucket_bytes(), 50.0 * 1024 * 1024);
  // What the base file says is kept, and provenance names the base scenario.
  EXPECT_EQ(sc.name, "gpt3-1.3b-dp8");
  EXPECT_EQ(sc.path.filename(), "01-gpt3-1.3b-dp8.yaml");
  EXPECT_EQ(sc.content_hash, config::load_scenario(s.base).content_hash);
}

TEST(PointScenario, PathsInValuesAreRelativeToTheSweepFile) {
  ScratchDir dir;
  const std::filesystem::path topologies = std::filesystem::path(TRAINSIM_SOURCE_DIR) / "topologies";
  const std::string relative = topologies.lexically_relative(dir.path()).string();
  const SweepFile s = load_sweep(write_file(dir, "s.yaml",
                                            R"(schema_version: 1
base: $SCENARIOS/00-gpt3-125m-1gpu.yaml
axes:
  - {key: cluster.topology, name: topology, values: [)" +
                                                relative + "/hgx-a100-4gpu.yaml, " + relative +
                                                "/dgx-a100-superpod.yaml]}\n"));
  const ExpandedSweep e = expand(s);
  EXPECT_EQ(load_point_scenario(s, e.points[0].settings(s)).cluster.topology.name, "hgx-a100-4gpu");
  EXPECT_EQ(load_point_scenario(s, e.points[1].settings(s)).cluster.topology.name, "dgx-a100-superpod");
}

class Evaluate : public ::testing::Test {
 protected:
  void SetUp() override {
    sweep_ = load_sweep(write_file(dir_, "s.yaml", R"(schema_version: 1
base: $SCENARIOS/00-gpt3-125m-1gpu.yaml
axes:
  - zip:
      - {key: training.micro_batch, values: [8, 64]}
      - {key: training.global_batch, values: [8, 64]}
  - {key: training.dtype, values: [bf16, fp8]}
)"));
    points_ = expand(sweep_).points;
  }
  nlohmann::json analytic(size_t i) { return evaluate_point(sweep_, points_.at(i), {Mode::kAnalytic, {}}); }

  ScratchDir dir_;
  SweepFile sweep_;
  std::vector<Point> points_;
};

TEST_F(Evaluate, AFittingPointIsOk) {
  const nlohmann::json r = analytic(0);
  EXPECT_EQ(r["status"], "ok");
  EXPECT_EQ(r["reason"], "");
  EXPECT_EQ(r["mode"], "analytic");
  EXPECT_EQ(r["point"]["id"], points_[0].id);
  EXPECT_EQ(r["point"]["values"],
            (nlohmann::json{{"micro_batch", 8}, {"global_batch", 8}, {"dtype", "bf16"}}));
  EXPECT_GT(r["iteration_time_s"].get<double>(), 0);
  EXPECT_TRUE(r["memory"]["fits"].get<bool>());
  EXPECT_EQ(r["provenance"]["command_line"],
            "trainsim run " + (std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/00-gpt3-125m-1gpu.yaml") +
                " --set training.micro_batch=8 --set training.global_batch=8 --set training.dtype=bf16 "
                "--format json");
}

TEST(EvaluateCampaign, AnalyticPointsCarryTheCampaign) {
  ScratchDir dir;
  const SweepFile s = load_sweep(write_file(dir, "s.yaml", R"(schema_version: 1
base: $SCENARIOS/00-gpt3-125m-1gpu.yaml
set: {campaign.tokens: 2B, campaign.checkpoints.write_bandwidth: 1GB/s}
axes:
  - {key: campaign.checkpoints.interval, name: interval, values: [10min, 1h]}
)"));
  const std::vector<Point> points = expand(s).points;
  const nlohmann::json often = evaluate_point(s, points.at(0), {Mode::kAnalytic, {}});
  const nlohmann::json rarely = evaluate_point(s, points.at(1), {Mode::kAnalytic, {}});
  ASSERT_EQ(often["status"], "ok");
  const nlohmann::json& c = often["campaign"];
  EXPECT_EQ(c["iterations"].get<int64_t>(),
            static_cast<int64_t>(std::ceil(2e9 / (8.0 * 2048))));  // global batch 8 of 2048 tokens
  EXPECT_DOUBLE_EQ(c["training_s"].get<double>(),
                   c["iterations"].get<double>() * often["iteration_time_s"].get<double>());
  // Without interruptions the checkpoints are the only overhead: fewer of them cost less.
  EXPECT_GT(c["wall_time_s"].get<double>(), c["training_s"].get<double>());
  EXPECT_LT(rarely["campaign"]["wall_time_s"].get<double>(), c["wall_time_s"].get<double>());
}

TEST_F(Evaluate, APointThatDoesNotFitIsAnInfeasibleResult) {
  const nlohmann::json r = analytic(2);
  EXPECT_EQ(r["status"], "infeasible");
  EXPECT_THAT(r["reason"].get<std::string>(),
              HasSubstr("GiB of HBM at its peak but the GPU has 76.00 GiB usable (the GPU's "
                        "80.00 GiB less the 5% headroom"));
  EXPECT_FALSE(r["memory"]["fits"].get<bool>());
  EXPECT_GT(r["iteration_time_s"].get<double>(), 0);
}

TEST_F(Evaluate, AnInvalidPointIsAResultLocatedAtItsValue) {
  const nlohmann::json r = analytic(1);
  EXPECT_EQ(r["status"], "invalid");
  EXPECT_THAT(r["reason"].get<std::string>(), StartsWith("s.yaml:7:42: error: training.dtype: "));
  EXPECT_FALSE(r.contains("iteration_time_s"));
}

}  // namespace
}  // namespace trainsim::sweep
