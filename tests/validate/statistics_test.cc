// Relative errors, tolerance checks, quantiles and the gate, on known inputs.
#include "sim/validate/statistics.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace trainsim::validate {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

Case make_case(Comparison comparison, bool relative, double tolerance) {
  Case c;
  c.published = 10;
  c.comparison = comparison;
  c.tolerance = {relative, tolerance};
  c.confidence = Confidence::kS2;
  return c;
}

TEST(Statistics, RelativeErrorIsSignedAgainstThePublishedValue) {
  EXPECT_DOUBLE_EQ(relative_error(11, 10), 0.1);
  EXPECT_DOUBLE_EQ(relative_error(8, 10), -0.2);
}

TEST(Statistics, ToleranceEqual) {
  const Case relative = make_case(Comparison::kEqual, true, 0.05);
  EXPECT_TRUE(within_tolerance(relative, 10.5));
  EXPECT_TRUE(within_tolerance(relative, 9.5));
  EXPECT_FALSE(within_tolerance(relative, 10.6));
  EXPECT_FALSE(within_tolerance(relative, 9.4));
  const Case absolute = make_case(Comparison::kEqual, false, 0.3);
  EXPECT_TRUE(within_tolerance(absolute, 10.25));
  EXPECT_FALSE(within_tolerance(absolute, 9.6));
  EXPECT_FALSE(within_tolerance(absolute, std::numeric_limits<double>::quiet_NaN()));
}

TEST(Statistics, ToleranceBounds) {
  const Case at_least = make_case(Comparison::kAtLeast, false, 0);
  EXPECT_TRUE(within_tolerance(at_least, 10));
  EXPECT_TRUE(within_tolerance(at_least, 1000));
  EXPECT_FALSE(within_tolerance(at_least, 9.99));
  const Case at_most = make_case(Comparison::kAtMost, true, 0.1);
  EXPECT_TRUE(within_tolerance(at_most, 11));
  EXPECT_TRUE(within_tolerance(at_most, 0));
  EXPECT_FALSE(within_tolerance(at_most, 11.1));
}

TEST(Statistics, OnlyConfirmedMeasuredValuesAreScored) {
  Case c = make_case(Comparison::kEqual, true, 0.1);
  EXPECT_TRUE(is_scored(c));
  c.confidence = Confidence::kUnconfirmed;
  EXPECT_FALSE(is_scored(c));
  c = make_case(Comparison::kAtLeast, true, 0.1);
  EXPECT_FALSE(is_scored(c));
}

TEST(Statistics, QuantilesInterpolateLinearly) {
  EXPECT_DOUBLE_EQ(quantile({4, 1, 3, 2}, 0.5), 2.5);
  EXPECT_DOUBLE_EQ(quantile({4, 1, 3, 2}, 0.9), 3.7);
  EXPECT_DOUBLE_EQ(quantile({4, 1, 3, 2}, 0), 1);
  EXPECT_DOUBLE_EQ(quantile({4, 1, 3, 2}, 1), 4);
  EXPECT_DOUBLE_EQ(quantile({7}, 0.9), 7);
  EXPECT_DOUBLE_EQ(quantile({}, 0.5), 0);
}

TEST(Statistics, SummaryOfAbsoluteErrors) {
  const ErrorSummary s = summarize_errors({0.01, 0.05, 0.02, 0.10, 0.03});
  EXPECT_EQ(s.cases, 5u);
  EXPECT_DOUBLE_EQ(s.median_abs_error, 0.03);
  EXPECT_NEAR(s.p90_abs_error, 0.08, 1e-12);
  EXPECT_DOUBLE_EQ(s.max_abs_error, 0.10);
}

TEST(Statistics, GateHoldsWithinBothThresholds) {
  const Gate gate{0.05, 0.12};
  EXPECT_TRUE(gate_violations("s", gate, {{"a", 0.01, ""}, {"b", 0.04, ""}, {"c", 0.12, ""}}).empty());
}

TEST(Statistics, GateNamesEveryViolation) {
  const Gate gate{0.05, 0.12};
  const std::vector<std::string> v =
      gate_violations("suite-x", gate, {{"a", 0.01, ""}, {"b", 0.13, ""}, {"c", 0.20, ""}});
  ASSERT_EQ(v.size(), 3u);
  EXPECT_EQ(v[0], "suite-x: median |error| 13.00% exceeds 5.00%");
  EXPECT_THAT(v[1], HasSubstr("case b: |error| 13.00% exceeds the 12.00% allowed"));
  EXPECT_THAT(v[2], HasSubstr("case c: |error| 20.00%"));
}

TEST(Statistics, GateFailsCasesWithoutValueAndEmptySuites) {
  const Gate gate{0.05, 0.12};
  EXPECT_THAT(gate_violations("s", gate, {{"a", std::nullopt, "deadlock"}}),
              ElementsAre("s: case a has no simulated value (deadlock)"));
  EXPECT_THAT(gate_violations("s", gate, {}), ElementsAre("s: no scored case to gate on"));
}

}  // namespace
}  // namespace trainsim::validate
