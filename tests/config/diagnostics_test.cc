#include "sim/config/diagnostics.h"

#include <gtest/gtest.h>

namespace trainsim::config {
namespace {

TEST(Diagnostics, RendersGccStyle) {
  Diagnostic d{{"a.yaml", 3, 7}, "model.layers", "must be at least 1, got 0"};
  EXPECT_EQ(d.to_string(), "a.yaml:3:7: error: model.layers: must be at least 1, got 0");
  Diagnostic whole_file{{"b.yaml"}, "", "cannot read file"};
  EXPECT_EQ(whole_file.to_string(), "b.yaml: error: cannot read file");
}

TEST(Diagnostics, ErrorCarriesAllSortedByPosition) {
  Diagnostics d;
  d.error({"b.yaml", 1, 1}, "x", "third");
  d.error({"a.yaml", 9, 1}, "y", "second");
  d.error({"a.yaml", 2, 5}, "z", "first");
  try {
    d.throw_if_any();
    FAIL() << "expected a ConfigError";
  } catch (const ConfigError& e) {
    ASSERT_EQ(e.diagnostics().size(), 3u);
    EXPECT_STREQ(e.what(),
                 "a.yaml:2:5: error: z: first\na.yaml:9:1: error: y: second\nb.yaml:1:1: error: x: third");
  }
}

TEST(Diagnostics, NothingCollectedThrowsNothing) {
  Diagnostics d;
  EXPECT_NO_THROW(d.throw_if_any());
}

TEST(Diagnostics, DidYouMean) {
  const std::vector<std::string> keys = {"global_batch", "micro_batch", "dtype", "optimizer"};
  EXPECT_EQ(did_you_mean("micro_bach", keys), " (did you mean \"micro_batch\"?)");
  EXPECT_EQ(did_you_mean("dtpye", keys), " (did you mean \"dtype\"?)");
  EXPECT_EQ(did_you_mean("completely_else", keys), "");
}

}  // namespace
}  // namespace trainsim::config
