// The filter expressions of sweep files: `tp * pp <= 64`, `seq_len / chunk_tokens >= 4`,
// `sequence_parallel == "fpdt" || sp == 1`. A small, total language over numbers and strings:
//   or      := and (("||" | "or") and)*
//   and     := not (("&&" | "and") not)*
//   not     := ("!" | "not") not | compare
//   compare := sum (("<" | "<=" | ">" | ">=" | "==" | "!=") sum)?
//   sum     := product (("+" | "-") product)*
//   product := unary (("*" | "/" | "%") unary)*
//   unary   := "-" unary | primary
//   primary := number | string | name | "(" or ")"
// Numbers may carry a binary suffix (128Ki = 131072); strings are "double-quoted"; names are
// identifiers, optionally dotted (model.heads). Comparisons and logic give 1 or 0; a number is true
// when non-zero. Arithmetic needs numbers; == and != compare strings too.
#ifndef TRAINSIM_SIM_SWEEP_EXPRESSION_H_
#define TRAINSIM_SIM_SWEEP_EXPRESSION_H_

#include <cstddef>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace trainsim::sweep {

// A value in an expression: a number, or a string when `is_number` is false.
struct Value {
  bool is_number = true;
  double number = 0;
  std::string text;

  static Value of(double number) { return {true, number, {}}; }
  static Value of(std::string text) { return {false, 0, std::move(text)}; }
  // "64", "0.5", or the string in quotes.
  std::string to_string() const;
};

// A problem in an expression, at a 0-based offset into its text.
class ExpressionError : public std::runtime_error {
 public:
  ExpressionError(size_t offset, const std::string& message) : std::runtime_error(message), offset_(offset) {}
  size_t offset() const { return offset_; }

 private:
  size_t offset_;
};

// A name an expression refers to and where it appears.
struct NameUse {
  std::string name;
  size_t offset = 0;
};

class Expression {
 public:
  // Parses `text`. Throws ExpressionError for a syntax error.
  static Expression parse(std::string_view text);

  // Every name the expression uses, in order of appearance.
  const std::vector<NameUse>& names() const { return names_; }

  // Evaluates with `lookup` giving each name's value (it is only asked for names in names()).
  // Throws ExpressionError for type errors (arithmetic on a string, comparing a string with a number,
  // division by zero).
  Value evaluate(const std::function<Value(const std::string&)>& lookup) const;
  // evaluate(...) as a truth value.
  bool holds(const std::function<Value(const std::string&)>& lookup) const;

  struct Node;

 private:
  std::shared_ptr<const Node> root_;
  std::vector<NameUse> names_;
};

}  // namespace trainsim::sweep

#endif  // TRAINSIM_SIM_SWEEP_EXPRESSION_H_
