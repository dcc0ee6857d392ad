// The filter expression language of sweep files.
#include "sim/sweep/expression.h"

#include <map>

#include <gtest/gtest.h>

namespace trainsim::sweep {
namespace {

Value eval(const std::string& text, const std::map<std::string, Value>& names = {}) {
  return Expression::parse(text).evaluate([&](const std::string& n) { return names.at(n); });
}

double number(const std::string& text, const std::map<std::string, Value>& names = {}) {
  const Value v = eval(text, names);
  EXPECT_TRUE(v.is_number) << text;
  return v.number;
}

TEST(Expression, ArithmeticFollowsPrecedence) {
  EXPECT_EQ(number("1 + 2 * 3"), 7);
  EXPECT_EQ(number("(1 + 2) * 3"), 9);
  EXPECT_EQ(number("-2 * -3"), 6);
  EXPECT_EQ(number("7 % 4 + 10 / 4"), 5.5);
  EXPECT_EQ(number("2 - 3 - 4"), -5);
  EXPECT_EQ(number("128Ki / 64Ki"), 2);
}

TEST(Expression, ComparisonsAndLogicGiveOneOrZero) {
  const std::map<std::string, Value> p{{"tp", Value::of(8.0)}, {"pp", Value::of(16.0)}};
  EXPECT_EQ(number("tp * pp <= 64", p), 0);
  EXPECT_EQ(number("tp * pp <= 128", p), 1);
  EXPECT_EQ(number("tp == 8 && pp != 8", p), 1);
  EXPECT_EQ(number("tp > 8 || pp >= 16", p), 1);
  EXPECT_EQ(number("not (tp < 8) and !(pp < 16)", p), 1);
  EXPECT_EQ(number("tp < 8 or pp < 16", p), 0);
}

TEST(Expression, StringsCompareForEquality) {
  const std::map<std::string, Value> p{{"sequence_parallel", Value::of(std::string("fpdt"))},
                                       {"sp", Value::of(4.0)}};
  EXPECT_EQ(number("sequence_parallel == \"fpdt\" || sp == 1", p), 1);
  EXPECT_EQ(number("sequence_parallel != \"fpdt\"", p), 0);
}

TEST(Expression, DottedNamesAreNames) {
  const Expression e = Expression::parse("model.heads % tp == 0");
  ASSERT_EQ(e.names().size(), 2u);
  EXPECT_EQ(e.names()[0].name, "model.heads");
  EXPECT_EQ(e.names()[0].offset, 0u);
  EXPECT_EQ(e.names()[1].name, "tp");
  EXPECT_EQ(e.names()[1].offset, 14u);
  // A keyword only ends a name at a word boundary.
  EXPECT_EQ(Expression::parse("order < notation").names()[1].name, "notation");
}

TEST(Expression, ShortCircuitSkipsTheOtherSide) {
  // "x" is never looked up when the left side decides.
  EXPECT_EQ(number("0 && x > 1"), 0);
  EXPECT_EQ(number("1 || x > 1"), 1);
}

TEST(Expression, SyntaxErrorsSayWhere) {
  const auto offset_of = [](const std::string& text) -> long {
    try {
      Expression::parse(text);
    } catch (const ExpressionError& e) {
      return static_cast<long>(e.offset());
    }
    return -1;
  };
  EXPECT_EQ(offset_of("tp * "), 5);
  EXPECT_EQ(offset_of("tp ** 2"), 4);
  EXPECT_EQ(offset_of("(tp + 1"), 7);
  EXPECT_EQ(offset_of("tp == \"x"), 6);
  EXPECT_EQ(offset_of("tp 2"), 3);
  EXPECT_EQ(offset_of("3x"), 0);
}

TEST(Expression, TypeErrorsAreReported) {
  const std::map<std::string, Value> p{{"kind", Value::of(std::string("ring"))}, {"tp", Value::of(2.0)}};
  EXPECT_THROW(eval("kind * 2", p), ExpressionError);
  EXPECT_THROW(eval("kind == 2", p), ExpressionError);
  EXPECT_THROW(eval("-kind", p), ExpressionError);
  try {
    eval("tp / (tp - 2)", p);
    FAIL() << "division by zero passed";
  } catch (const ExpressionError& e) {
    EXPECT_EQ(e.offset(), 3u);
  }
}

}  // namespace
}  // namespace trainsim::sweep
