#include "sim/sweep/expression.h"

#include <cctype>
#include <cmath>

#include <fmt/format.h>

#include "sim/config/units.h"

namespace trainsim::sweep {

std::string Value::to_string() const {
  if (!is_number) return fmt::format("\"{}\"", text);
  return fmt::format("{:g}", number);
}

struct Expression::Node {
  enum class Kind { kConstant, kName, kNegate, kNot, kBinary };
  Kind kind = Kind::kConstant;
  size_t offset = 0;  // where the node's text starts (binary: the operator)
  Value constant;     // kConstant
  std::string name;   // kName
  std::string op;     // kBinary
  std::shared_ptr<const Node> left, right;
};

namespace {

using NodePtr = std::shared_ptr<const Expression::Node>;
using Kind = Expression::Node::Kind;

bool is_name_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool is_name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.'; }

class Parser {
 public:
  Parser(std::string_view text, std::vector<NameUse>* names) : text_(text), names_(names) {}

  NodePtr parse() {
    NodePtr root = parse_or();
    skip_space();
    if (pos_ < text_.size()) fail(pos_, fmt::format("unexpected \"{}\"", text_.substr(pos_)));
    return root;
  }

 private:
  [[noreturn]] void fail(size_t offset, const std::string& message) const {
    throw ExpressionError(offset, message);
  }

  void skip_space() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }

  // Consumes `token` if it comes next; a word token must not run on into a longer name.
  bool accept(std::string_view token) {
    skip_space();
    if (text_.substr(pos_, token.size()) != token) return false;
    const size_t after = pos_ + token.size();
    if (is_name_start(token[0]) && after < text_.size() && is_name_char(text_[after])) return false;
    pos_ = after;
    return true;
  }

  NodePtr binary(const std::string& op, size_t offset, NodePtr left, NodePtr right) {
    auto node = std::make_shared<Expression::Node>();
    node->kind = Kind::kBinary;
    node->op = op;
    node->offset = offset;
    node->left = std::move(left);
    node->right = std::move(right);
    return node;
  }

  NodePtr parse_or() {
    NodePtr left = parse_and();
    for (;;) {
      skip_space();
      const size_t at = pos_;
      if (!accept("||") && !accept("or")) return left;
      left = binary("||", at, left, parse_and());
    }
  }

  NodePtr parse_and() {
    NodePtr left = parse_not();
    for (;;) {
      skip_space();
      const size_t at = pos_;
      if (!accept("&&") && !accept("and")) return left;
      left = binary("&&", at, left, parse_not());
    }
  }

  NodePtr parse_not() {
    skip_space();
    const size_t at = pos_;
    if (text_.substr(pos_, 2) != "!=" && (accept("!") || accept("not"))) {
      auto node = std::make_shared<Expression::Node>();
      node->kind = Kind::kNot;
      node->offset = at;
      node->left = parse_not();
      return node;
    }
    return parse_compare();
  }

  NodePtr parse_compare() {
    NodePtr left = parse_sum();
    skip_space();
    const size_t at = pos_;
    for (const char* op : {"<=", ">=", "==", "!=", "<", ">"}) {
      if (accept(op)) return binary(op, at, left, parse_sum());
    }
    return left;
  }

  NodePtr parse_sum() {
    NodePtr left = parse_product();
    for (;;) {
      skip_space();
      const size_t at = pos_;
      if (accept("+")) {
        left = binary("+", at, left, parse_product());
      } else if (accept("-")) {
        left = binary("-", at, left, parse_product());
      } else {
        return left;
      }
    }
  }

  NodePtr parse_product() {
    NodePtr left = parse_unary();
    for (;;) {
      skip_space();
      const size_t at = pos_;
      const char* found = nullptr;
      for (const char* op : {"*", "/", "%"}) {
        if (accept(op)) {
          found = op;
          break;
        }
      }
      if (found == nullptr) return left;
      left = binary(found, at, left, parse_unary());
    }
  }

  NodePtr parse_unary() {
    skip_space();
    const size_t at = pos_;
    if (accept("-")) {
      auto node = std::make_shared<Expression::Node>();
      node->kind = Kind::kNegate;
      node->offset = at;
      node->left = parse_unary();
      return node;
    }
    return parse_primary();
  }

  NodePtr parse_primary() {
    skip_space();
    const size_t at = pos_;
    if (pos_ >= text_.size()) fail(at, "expected a number, a name, a \"string\" or \"(\", got the end");
    auto node = std::make_shared<Expression::Node>();
    node->offset = at;
    const char c = text_[pos_];
    if (c == '(') {
      ++pos_;
      NodePtr inner = parse_or();
      if (!accept(")")) fail(pos_, fmt::format("expected \")\" to close the \"(\" at column {}", at + 1));
      return inner;
    }
    if (c == '"') {
      const size_t end = text_.find('"', pos_ + 1);
      if (end == std::string_view::npos) fail(at, "unterminated string: add the closing \"");
      node->constant = Value::of(std::string(text_.substr(pos_ + 1, end - pos_ - 1)));
      pos_ = end + 1;
      return node;
    }
    if (std::isdigit(static_cast<unsigned char>(c)) || c == '.') {
      size_t end = pos_;
      while (end < text_.size() &&
             (std::isalnum(static_cast<unsigned char>(text_[end])) || text_[end] == '.')) {
        ++end;
      }
      const std::string word(text_.substr(pos_, end - pos_));
      std::string error;
      if (const std::optional<int64_t> count = config::parse_count(word, &error)) {
        node->constant = Value::of(static_cast<double>(*count));
      } else {
        size_t used = 0;
        double number = 0;
        try {
          number = std::stod(word, &used);
        } catch (const std::exception&) {
          used = 0;
        }
        if (used != word.size()) fail(at, fmt::format("\"{}\" is not a number ({})", word, error));
        node->constant = Value::of(number);
      }
      pos_ = end;
      return node;
    }
    if (is_name_start(c)) {
      size_t end = pos_;
      while (end < text_.size() && is_name_char(text_[end])) ++end;
      node->kind = Kind::kName;
      node->name = std::string(text_.substr(pos_, end - pos_));
      names_->push_back({node->name, at});
      pos_ = end;
      return node;
    }
    fail(at, fmt::format("unexpected \"{}\"; expected a number, a name, a \"string\" or \"(\"", c));
  }

  std::string_view text_;
  std::vector<NameUse>* names_;
  size_t pos_ = 0;
};

bool truth(const Value& v) { return v.is_number ? v.number != 0 : !v.text.empty(); }

Value evaluate_node(const Expression::Node& node, const std::function<Value(const std::string&)>& lookup) {
  switch (node.kind) {
    case Kind::kConstant:
      return node.constant;
    case Kind::kName:
      return lookup(node.name);
    case Kind::kNot:
      return Value::of(truth(evaluate_node(*node.left, lookup)) ? 0.0 : 1.0);
    case Kind::kNegate: {
      const Value v = evaluate_node(*node.left, lookup);
      if (!v.is_number)
        throw ExpressionError(node.offset, fmt::format("cannot negate the string {}", v.to_string()));
      return Value::of(-v.number);
    }
    case Kind::kBinary:
      break;
  }
  const std::string& op = node.op;
  const Value a = evaluate_node(*node.left, lookup);
  if (op == "&&" && !truth(a)) return Value::of(0.0);
  if (op == "||" && truth(a)) return Value::of(1.0);
  const Value b = evaluate_node(*node.right, lookup);
  if (op == "&&" || op == "||") return Value::of(truth(b) ? 1.0 : 0.0);
  if (op == "==" || op == "!=") {
    if (a.is_number != b.is_number) {
      throw ExpressionError(node.offset, fmt::format("cannot compare {} with {} (a string and a number)",
                                                     a.to_string(), b.to_string()));
    }
    const bool equal = a.is_number ? a.number == b.number : a.text == b.text;
    return Value::of(equal == (op == "==") ? 1.0 : 0.0);
  }
  if (!a.is_number || !b.is_number) {
    throw ExpressionError(
        node.offset, fmt::format("\"{}\" needs numbers, got {} and {}", op, a.to_string(), b.to_string()));
  }
  const double x = a.number, y = b.number;
  if (op == "<") return Value::of(x < y ? 1.0 : 0.0);
  if (op == "<=") return Value::of(x <= y ? 1.0 : 0.0);
  if (op == ">") return Value::of(x > y ? 1.0 : 0.0);
  if (op == ">=") return Value::of(x >= y ? 1.0 : 0.0);
  if (op == "+") return Value::of(x + y);
  if (op == "-") return Value::of(x - y);
  if (op == "*") return Value::of(x * y);
  if (y == 0)
    throw ExpressionError(node.offset, fmt::format("division by zero ({} {} 0)", a.to_string(), op));
  if (op == "/") return Value::of(x / y);
  return Value::of(std::fmod(x, y));
}

}  // namespace

Expression Expression::parse(std::string_view text) {
  Expression e;
  e.root_ = Parser(text, &e.names_).parse();
  return e;
}

Value Expression::evaluate(const std::function<Value(const std::string&)>& lookup) const {
  return evaluate_node(*root_, lookup);
}

bool Expression::holds(const std::function<Value(const std::string&)>& lookup) const {
  return truth(evaluate(lookup));
}

}  // namespace trainsim::sweep
