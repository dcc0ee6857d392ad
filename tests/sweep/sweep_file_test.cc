// Decoding sweep files: what they may say, and located errors for what they may not.
#include "sim/sweep/sweep_file.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "sim/config/loader.h"
#include "tests/sweep/sweep_test_util.h"

namespace trainsim::sweep {
namespace {

using ::testing::HasSubstr;
using testing::ScratchDir;
using testing::write_file;

// The diagnostics of loading `body` as DIR/bad.yaml, one per line.
std::string errors_of(const std::string& body) {
  ScratchDir dir;
  const std::filesystem::path file = write_file(dir, "bad.yaml", body);
  try {
    load_sweep(file);
  } catch (const config::ConfigError& e) {
    std::string out;
    for (const config::Diagnostic& d : e.diagnostics()) {
      const std::string text = d.to_string();
      const size_t name = text.find("bad.yaml");
      out += (name == std::string::npos ? text : text.substr(name)) + "\n";
    }
    return out;
  }
  return "no error";
}

TEST(SweepFile, DecodesAxesGroupsFiltersAndSettings) {
  ScratchDir dir;
  const SweepFile s = load_sweep(write_file(dir, "s.yaml", R"(schema_version: 1
name: demo
description: a demo
base: $SCENARIOS/01-gpt3-1.3b-dp8.yaml
set: {parallelism.dp_bucket: 50MiB}
axes:
  - {key: model.seq_len, values: [1Ki, 2Ki]}
  - {key: training.micro_batch, name: mb, range: {from: 1, to: 8, times: 2}}
  - zip:
      - {key: parallelism.zero_stage, values: [0, 1]}
      - product:
          - {key: parallelism.recompute, values: [none]}
          - {key: parallelism.overlap_grad_reduce, values: [true, false]}
filter: "mb * seq_len <= 8Ki"
)"));
  EXPECT_EQ(s.name, "demo");
  EXPECT_EQ(s.description, "a demo");
  ASSERT_EQ(s.set.size(), 1u);
  EXPECT_EQ(s.set[0].key, "parallelism.dp_bucket");
  EXPECT_EQ(s.set[0].location.line, 5);
  const std::vector<const Axis*> axes = s.axis_list();
  ASSERT_EQ(axes.size(), 5u);
  EXPECT_EQ(axes[0]->name, "seq_len");
  EXPECT_EQ(axes[1]->name, "mb");
  std::vector<std::string> mb;
  for (const AxisValue& v : axes[1]->values) mb.push_back(v.text);
  EXPECT_EQ(mb, (std::vector<std::string>{"1", "2", "4", "8"}));
  EXPECT_EQ(axes[4]->name, "overlap_grad_reduce");
  EXPECT_EQ(s.axes.members[2].kind, AxisGroup::Kind::kZip);
  ASSERT_EQ(s.filters.size(), 1u);
  EXPECT_EQ(s.filters[0].location.column, 10);  // after the opening quote
  // Scenario keys are there for filters, `set` replacing the base's value.
  EXPECT_EQ(s.base_fields.at("model.heads").number,
            static_cast<double>(config::load_scenario(s.base).model.heads));
  EXPECT_EQ(s.base_fields.at("parallelism.dp_bucket").number, 50.0 * 1024 * 1024);
  EXPECT_FALSE(s.base_fields.at("parallelism.schedule").is_number);
}

TEST(SweepFile, ArithmeticRangesStepThroughTheBounds) {
  ScratchDir dir;
  const SweepFile s = load_sweep(write_file(dir, "s.yaml", R"(schema_version: 1
base: $SCENARIOS/00-gpt3-125m-1gpu.yaml
axes: [{key: training.global_batch, range: {from: 8, to: 40, step: 16}}]
)"));
  std::vector<std::string> values;
  for (const AxisValue& v : s.axis_list()[0]->values) values.push_back(v.text);
  EXPECT_EQ(values, (std::vector<std::string>{"8", "24", "40"}));
  EXPECT_EQ(s.name, "s");  // the file's stem when no name is given
}

TEST(SweepFile, ErrorsAreLocatedWithTheirKey) {
  const std::string errors = errors_of(R"(schema_version: 1
base: $SCENARIOS/00-gpt3-125m-1gpu.yaml
axis: []
axes:
  - {key: parallelism.tp, values: []}
  - {key: training.micro_batch, values: [1], range: {from: 1, to: 2, step: 1}}
  - {key: model.seq_len, range: {from: 4, to: 2, step: 1}}
  - {key: model.seq_len, values: [1]}
  - {key: parallelism.pp, range: {from: 1, to: 8, step: 1, times: 2}}
  - zip:
      - {key: parallelism.dp, values: [1, 2]}
      - {key: training.global_batch, values: [8]}
  - {key: "parallelism..x", values: [1]}
  - {key: a.tp, values: [1]}
  - {name: 9lives, key: model.layers, values: [1]}
  - {values: [1]}
filter: ["tp * * 2", "zp > 1"]
)");
  EXPECT_THAT(errors, HasSubstr("bad.yaml:3:1: error: axis: unknown key \"axis\" (did you mean \"axes\"?)"));
  EXPECT_THAT(errors, HasSubstr("bad.yaml:5:35: error: axes[0].values: expected a non-empty list of values"));
  EXPECT_THAT(errors, HasSubstr("bad.yaml:6:5: error: axes[1]: an axis needs exactly one of values"));
  EXPECT_THAT(errors, HasSubstr("bad.yaml:7:33: error: axes[2].range: from 4 is above to 2"));
  EXPECT_THAT(errors, HasSubstr("bad.yaml:8:11: error: axes[3].key: key model.seq_len is swept twice"));
  EXPECT_THAT(errors, HasSubstr("bad.yaml:9:34: error: axes[4].range: give exactly one of step"));
  EXPECT_THAT(errors,
              HasSubstr("bad.yaml:11:7: error: axes[5].zip: the members of a zip need the same number "
                        "of values; they have 2, 1"));
  EXPECT_THAT(
      errors,
      HasSubstr("bad.yaml:13:11: error: axes[6].key: \"parallelism..x\" is not a dotted scenario key"));
  EXPECT_THAT(
      errors,
      HasSubstr("bad.yaml:14:11: error: axes[7].key: two axes are named \"tp\" (parallelism.tp and a.tp)"));
  EXPECT_THAT(errors, HasSubstr("bad.yaml:15:12: error: axes[8].name: \"9lives\" is not a name"));
  EXPECT_THAT(errors, HasSubstr("bad.yaml:16:5: error: axes[9].key: missing required key"));
  EXPECT_THAT(errors,
              HasSubstr("bad.yaml:17:16: error: filter[0]: in filter \"tp * * 2\": unexpected \"*\""));
}

TEST(SweepFile, FilterNamesMustBeAxesOrScenarioKeys) {
  const std::string errors = errors_of(R"(schema_version: 1
base: $SCENARIOS/00-gpt3-125m-1gpu.yaml
axes: [{key: training.micro_batch, values: [1, 2]}]
filter:
  - micro_bach * model.hiden > 0
)");
  EXPECT_THAT(errors, HasSubstr("bad.yaml:5:5: error: filter[0]: unknown name \"micro_bach\" (did you mean "
                                "\"micro_batch\"?); a filter names an axis (micro_batch)"));
  EXPECT_THAT(errors, HasSubstr("bad.yaml:5:18: error: filter[0]: unknown name \"model.hiden\" (did you mean "
                                "\"model.hidden\"?)"));
}

TEST(SweepFile, BadSettingsAreLocatedInTheSweepFile) {
  const std::string errors = errors_of(R"(schema_version: 1
base: $SCENARIOS/00-gpt3-125m-1gpu.yaml
set:
  parallelism.zero_stag: 1
  training.dtype: bf17
axes: [{key: training.micro_batch, values: [1, 2]}]
)");
  EXPECT_THAT(errors, HasSubstr("bad.yaml:4:26: error: parallelism.zero_stag: unknown key \"zero_stag\""));
  EXPECT_THAT(errors, HasSubstr("bad.yaml:5:19: error: training.dtype: unknown value \"bf17\""));
}

TEST(SweepFile, SettingAnAxisKeyOrAMissingBaseIsAnError) {
  EXPECT_THAT(errors_of(R"(schema_version: 1
base: $SCENARIOS/00-gpt3-125m-1gpu.yaml
set: {training.micro_batch: 2}
axes: [{key: training.micro_batch, values: [1, 2]}]
)"),
              HasSubstr("bad.yaml:3:29: error: set.training.micro_batch: this key is also an axis"));
  EXPECT_THAT(errors_of(R"(schema_version: 2
base: nowhere.yaml
axes: [{key: training.micro_batch, values: [1]}]
)"),
              HasSubstr("bad.yaml:1:17: error: schema_version: unsupported schema_version 2"));
  EXPECT_THAT(errors_of("schema_version: 1\nbase: nowhere.yaml\naxes: [{key: a.b, values: [1]}]\n"),
              HasSubstr("nowhere.yaml: error: cannot read file"));
  EXPECT_THAT(errors_of("schema_version: 1\nbase: [oops\n"), HasSubstr("bad.yaml:3:1: error: invalid YAML"));
}

}  // namespace
}  // namespace trainsim::sweep
