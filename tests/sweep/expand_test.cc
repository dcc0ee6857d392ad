// Expansion of sweep files into points: order, groups, filters and stable ids.
#include "sim/sweep/expand.h"

#include <set>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/sweep/sweep_test_util.h"

namespace trainsim::sweep {
namespace {

using ::testing::HasSubstr;
using testing::ScratchDir;
using testing::write_file;

ExpandedSweep expand_text(const std::string& body) {
  ScratchDir dir;
  return expand(load_sweep(write_file(dir, "s.yaml", body)));
}

// "a=1 b=x" for each point.
std::vector<std::string> described(const ExpandedSweep& e) {
  std::vector<std::string> out;
  for (const Point& p : e.points) {
    std::string line;
    for (const Coordinate& c : p.coordinates) line += (line.empty() ? "" : " ") + c.name + "=" + c.text;
    out.push_back(line);
  }
  return out;
}

const char* kHeader = "schema_version: 1\nbase: $SCENARIOS/01-gpt3-1.3b-dp8.yaml\n";

TEST(Expand, ProductVariesTheFirstAxisSlowest) {
  const ExpandedSweep e = expand_text(std::string(kHeader) + R"(axes:
  - {key: training.micro_batch, name: mb, values: [1, 2]}
  - {key: model.seq_len, name: s, values: [1Ki, 2Ki, 4Ki]}
)");
  EXPECT_EQ(described(e), (std::vector<std::string>{"mb=1 s=1Ki", "mb=1 s=2Ki", "mb=1 s=4Ki", "mb=2 s=1Ki",
                                                    "mb=2 s=2Ki", "mb=2 s=4Ki"}));
  EXPECT_EQ(e.axis_names, (std::vector<std::string>{"mb", "s"}));
  EXPECT_EQ(e.combinations, 6u);
  for (size_t i = 0; i < e.points.size(); ++i) EXPECT_EQ(e.points[i].index, i);
  EXPECT_EQ(e.points[4].values(), (nlohmann::json{{"mb", 2}, {"s", 2048}}));
}

TEST(Expand, ZipAdvancesTogetherAndNestsProducts) {
  const ExpandedSweep e = expand_text(std::string(kHeader) + R"(axes:
  - zip:
      - {key: training.micro_batch, name: mb, values: [1, 2, 4, 8]}
      - product:
          - {key: parallelism.zero_stage, name: z, values: [0, 1]}
          - {key: parallelism.recompute, name: r, values: [none, full]}
  - {key: parallelism.overlap_grad_reduce, name: o, values: [true, false]}
)");
  EXPECT_EQ(described(e), (std::vector<std::string>{"mb=1 z=0 r=none o=true", "mb=1 z=0 r=none o=false",
                                                    "mb=2 z=0 r=full o=true", "mb=2 z=0 r=full o=false",
                                                    "mb=4 z=1 r=none o=true", "mb=4 z=1 r=none o=false",
                                                    "mb=8 z=1 r=full o=true", "mb=8 z=1 r=full o=false"}));
  EXPECT_EQ(e.points[1].values(), (nlohmann::json{{"mb", 1}, {"z", 0}, {"r", "none"}, {"o", false}}));
}

TEST(Expand, FiltersSeeAxesByNameOrKeyAndScenarioKeys) {
  const ExpandedSweep e = expand_text(std::string(kHeader) + R"(axes:
  - {key: parallelism.tp, values: [1, 2, 4, 8, 16]}
  - {key: parallelism.pp, values: [1, 2, 4]}
filter:
  - tp * parallelism.pp <= 8
  - model.heads % tp == 0 && cluster.gpus >= tp * pp
)");
  EXPECT_EQ(described(e),
            (std::vector<std::string>{"tp=1 pp=1", "tp=1 pp=2", "tp=1 pp=4", "tp=2 pp=1", "tp=2 pp=2",
                                      "tp=2 pp=4", "tp=4 pp=1", "tp=4 pp=2", "tp=8 pp=1"}));
  EXPECT_EQ(e.combinations, 15u);
}

TEST(Expand, IdsDependOnTheValuesOnly) {
  const ExpandedSweep a = expand_text(std::string(kHeader) + R"(axes:
  - {key: training.micro_batch, values: [1, 2]}
  - {key: model.seq_len, values: [1Ki, 2Ki]}
)");
  // Another value added, the axes reordered and a value spelt differently: same ids for same points.
  const ExpandedSweep b = expand_text(std::string(kHeader) + R"(axes:
  - {key: model.seq_len, values: [1024, 2Ki, 4Ki]}
  - {key: training.micro_batch, values: [4, 2, 1]}
)");
  std::map<std::string, std::string> id_of;  // "mb seq" -> id
  for (const Point& p : a.points) id_of[p.values().dump()] = p.id;
  size_t matched = 0;
  for (const Point& p : b.points) {
    EXPECT_EQ(p.id.size(), 12u);
    nlohmann::json v = p.values();
    if (id_of.count(v.dump()) != 0) {
      EXPECT_EQ(id_of[v.dump()], p.id) << v.dump();
      ++matched;
    }
  }
  EXPECT_EQ(matched, 4u);
  std::set<std::string> ids;
  for (const Point& p : b.points) ids.insert(p.id);
  EXPECT_EQ(ids.size(), b.points.size());
  // The sweeps differ, and so do their hashes; expanding one twice gives the same hash.
  EXPECT_NE(a.hash, b.hash);
  EXPECT_EQ(a.hash, expand_text(std::string(kHeader) + R"(axes:
  - {key: training.micro_batch, values: [1, 2]}
  - {key: model.seq_len, values: [1Ki, 2Ki]}
)")
                        .hash);
}

TEST(Expand, RepeatedPointsAndFailingFiltersAreLocatedErrors) {
  try {
    expand_text(std::string(kHeader) + "axes: [{key: training.micro_batch, values: [1, 2, 1]}]\n");
    FAIL() << "duplicate values passed";
  } catch (const config::ConfigError& e) {
    EXPECT_THAT(e.what(), HasSubstr("s.yaml:3:51: error: axes: the point micro_batch=1 comes twice"));
  }
  try {
    expand_text(std::string(kHeader) +
                "axes: [{key: parallelism.recompute, values: [none, full]}]\nfilter: recompute > 1\n");
    FAIL() << "comparing a string with a number passed";
  } catch (const config::ConfigError& e) {
    EXPECT_THAT(e.what(), HasSubstr("s.yaml:4:19: error: filter: in filter \"recompute > 1\" at the point "
                                    "recompute=none: \">\" needs numbers, got \"none\" and 1"));
  }
}

TEST(Expand, SettingsOfAPointAreTheFixedOnesThenItsAxes) {
  ScratchDir dir;
  const SweepFile s =
      load_sweep(write_file(dir, "s.yaml", std::string(kHeader) + R"(set: {parallelism.zero_stage: 1}
axes: [{key: training.micro_batch, values: [2]}]
)"));
  const std::vector<Setting> settings = expand(s).points[0].settings(s);
  ASSERT_EQ(settings.size(), 2u);
  EXPECT_EQ(settings[0].key, "parallelism.zero_stage");
  EXPECT_EQ(settings[1].key, "training.micro_batch");
  EXPECT_EQ(settings[1].value, "2");
  EXPECT_EQ(settings[1].location.line, 4);
}

}  // namespace
}  // namespace trainsim::sweep
