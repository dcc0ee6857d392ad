#include "sim/config/node.h"

#include <charconv>
#include <cmath>

#include <fmt/format.h>

namespace trainsim::config {
namespace {

// The value of `key` in a YAML map (first occurrence), or an undefined node. Never inserts.
YAML::Node find_key(const YAML::Node& map, std::string_view key) {
  for (auto it = map.begin(); it != map.end(); ++it) {
    if (it->first.IsScalar() && it->first.Scalar() == key) return it->second;
  }
  return YAML::Node(YAML::NodeType::Undefined);
}

// The value at `key` of the map `node`, its layers merged: the first (highest-priority) value wins;
// lower layers only merge into it when both are maps.
Node child_of(const Node& node, std::string_view key) {
  std::vector<Layer> found;
  for (const Layer& layer : node.layers()) {
    if (!layer.node.IsMap()) continue;
    const YAML::Node value = find_key(layer.node, key);
    if (!value.IsDefined()) continue;
    if (!found.empty() && !(found.front().node.IsMap() && value.IsMap())) continue;
    found.push_back({value, layer.source});
    if (!value.IsMap()) break;
  }
  return Node(std::move(found), node.child_path(key), node.diagnostics(), node.location());
}

Location location_of(const YAML::Mark& mark, const Source& source) {
  if (mark.line < 0) return {source.name, source.column_offset > 0 ? 1 : 0, 1 + source.column_offset};
  return {source.name, mark.line + 1, mark.column + 1 + source.column_offset};
}

std::string describe(const Node& node) {
  if (!node.defined()) return "nothing";
  const YAML::Node& n = node.layers().front().node;
  if (n.IsMap()) return "a map";
  if (n.IsSequence()) return "a list";
  if (n.IsNull()) return "an empty value";
  return fmt::format("\"{}\"", n.Scalar());
}

// The scalar text, or an error naming what was found instead.
std::optional<std::string> scalar_or_error(const Node& node, std::string_view expected) {
  if (node.is_scalar()) return node.scalar();
  node.error(fmt::format("expected {}, got {}", expected, describe(node)));
  return std::nullopt;
}

template <class Int>
bool decode_integer(const Node& node, Int& out, IntRange range) {
  const std::optional<std::string> text = scalar_or_error(node, "a whole number");
  if (!text) return false;
  int64_t value = 0;
  const char* end = text->data() + text->size();
  const auto [ptr, ec] = std::from_chars(text->data(), end, value);
  if (ec != std::errc() || ptr != end) {
    node.error(fmt::format("expected a whole number, got \"{}\"", *text));
    return false;
  }
  range.min = std::max<int64_t>(range.min, std::numeric_limits<Int>::min());
  range.max = std::min<int64_t>(range.max, std::numeric_limits<Int>::max());
  if (value < range.min) {
    node.error(fmt::format("must be at least {}, got {}", range.min, value));
    return false;
  }
  if (value > range.max) {
    node.error(fmt::format("must be at most {}, got {}", range.max, value));
    return false;
  }
  out = static_cast<Int>(value);
  return true;
}

bool check_range(const Node& node, double value, const RealRange& range, const std::string& shown) {
  if (range.min_exclusive ? value <= range.min : value < range.min) {
    node.error(fmt::format("must be {} {}, got {}", range.min_exclusive ? "greater than" : "at least",
                           range.min, shown));
    return false;
  }
  if (value > range.max) {
    node.error(fmt::format("must be at most {}, got {}", range.max, shown));
    return false;
  }
  return true;
}

}  // namespace

Node::Node(std::vector<Layer> layers, std::string path, Diagnostics* diagnostics, Location anchor)
    : layers_(std::move(layers)),
      path_(std::move(path)),
      diagnostics_(diagnostics),
      anchor_(std::move(anchor)) {}

std::string Node::child_path(std::string_view key) const {
  return path_.empty() ? std::string(key) : fmt::format("{}.{}", path_, key);
}

Location Node::location() const {
  if (layers_.empty()) return anchor_;
  // A map merged from several layers is located where a file wrote it: maps built from --set keys
  // have no position of their own.
  for (const Layer& layer : layers_) {
    if (layer.node.Mark().line >= 0) return location_of(layer.node.Mark(), *layer.source);
  }
  return location_of(layers_.front().node.Mark(), *layers_.front().source);
}

std::string Node::scalar() const { return is_scalar() ? layers_.front().node.Scalar() : std::string(); }

std::vector<Node> Node::elements() const {
  std::vector<Node> out;
  if (!is_sequence()) return out;
  const Layer& top = layers_.front();
  size_t index = 0;
  for (const YAML::Node& element : top.node) {
    out.emplace_back(std::vector<Layer>{{element, top.source}}, fmt::format("{}[{}]", path_, index++),
                     diagnostics_);
  }
  return out;
}

const std::filesystem::path& Node::base_dir() const {
  static const std::filesystem::path kNone;
  return layers_.empty() ? kNone : layers_.front().source->dir;
}

Node Node::find(std::string_view path) const {
  Node at = *this;
  size_t start = 0;
  while (start < path.size() && at.defined()) {
    const size_t end = std::min(path.find_first_of(".[", start), path.size());
    if (end > start) at = child_of(at, path.substr(start, end - start));
    start = end;
    if (start < path.size() && path[start] == '[') {
      const size_t close = std::min(path.find(']', start), path.size());
      size_t index = 0;
      std::from_chars(path.data() + start + 1, path.data() + close, index);
      const std::vector<Node> elements = at.elements();
      at = index < elements.size()
               ? elements[index]
               : Node({}, fmt::format("{}[{}]", at.path(), index), at.diagnostics(), at.location());
      start = close + 1;
    }
    if (start < path.size() && path[start] == '.') ++start;
  }
  return at;
}

void Node::error(std::string message) const { diagnostics_->error(location(), path_, std::move(message)); }

bool decode(const Node& node, int64_t& out, IntRange range) { return decode_integer(node, out, range); }

bool decode(const Node& node, int& out, IntRange range) { return decode_integer(node, out, range); }

bool decode(const Node& node, double& out, RealRange range) {
  const std::optional<std::string> text = scalar_or_error(node, "a number");
  if (!text) return false;
  double value = 0;
  const char* end = text->data() + text->size();
  const auto [ptr, ec] = std::from_chars(text->data(), end, value);
  if (ec != std::errc() || ptr != end || !std::isfinite(value)) {
    node.error(fmt::format("expected a number, got \"{}\"", *text));
    return false;
  }
  if (!check_range(node, value, range, *text)) return false;
  out = value;
  return true;
}

bool decode(const Node& node, bool& out) {
  const std::optional<std::string> text = scalar_or_error(node, "true or false");
  if (!text) return false;
  if (*text != "true" && *text != "false") {
    node.error(fmt::format("expected true or false, got \"{}\"", *text));
    return false;
  }
  out = *text == "true";
  return true;
}

bool decode(const Node& node, std::string& out) {
  const std::optional<std::string> text = scalar_or_error(node, "a string");
  if (!text) return false;
  out = *text;
  return true;
}

bool decode(const Node& node, double& out, QuantityKind kind, RealRange range) {
  const std::optional<std::string> text =
      scalar_or_error(node, fmt::format("a {} with a unit", quantity_name(kind)));
  if (!text) return false;
  std::string message;
  const std::optional<double> value = parse_quantity(*text, kind, &message);
  if (!value) {
    node.error(message);
    return false;
  }
  if (!check_range(node, *value, range, *text)) return false;
  out = *value;
  return true;
}

bool decode_percent(const Node& node, double& out, double max_percent) {
  const std::optional<std::string> text = scalar_or_error(node, "a percentage such as 5%");
  if (!text) return false;
  double value = 0;
  const char* begin = text->data();
  const char* end = text->data() + text->size();
  if (text->empty() || text->back() != '%') {
    node.error(fmt::format("expected a percentage such as 5%, got \"{}\"", *text));
    return false;
  }
  const auto [ptr, ec] = std::from_chars(begin, end - 1, value);
  if (ec != std::errc() || ptr != end - 1 || !std::isfinite(value) || value < 0) {
    node.error(fmt::format("expected a non-negative percentage such as 5%, got \"{}\"", *text));
    return false;
  }
  if (value > max_percent) {
    node.error(fmt::format("must be at most {}%, got {}", max_percent, *text));
    return false;
  }
  out = value / 100;
  return true;
}

bool decode_count(const Node& node, int64_t& out, IntRange range) {
  const std::optional<std::string> text = scalar_or_error(node, "a whole number");
  if (!text) return false;
  std::string message;
  const std::optional<int64_t> value = parse_count(*text, &message);
  if (!value) {
    node.error(message);
    return false;
  }
  if (*value < range.min || *value > range.max) {
    node.error(*value < range.min ? fmt::format("must be at least {}, got {}", range.min, *text)
                                  : fmt::format("must be at most {}, got {}", range.max, *text));
    return false;
  }
  out = *value;
  return true;
}

bool decode(const Node& node, std::filesystem::path& out) {
  std::string text;
  if (!decode(node, text)) return false;
  if (text.empty()) {
    node.error("expected a file path, got an empty string");
    return false;
  }
  std::filesystem::path path(text);
  if (path.is_relative()) path = node.base_dir() / path;
  out = std::filesystem::absolute(path).lexically_normal();
  return true;
}

bool decode(const Node& node, std::vector<std::string>& out, std::string_view what) {
  if (!node.is_sequence()) {
    node.error(fmt::format("expected {}", what));
    return false;
  }
  bool all = true;
  for (const Node& element : node.elements()) {
    std::string text;
    if (decode(element, text)) {
      out.push_back(std::move(text));
    } else {
      all = false;
    }
  }
  return all;
}

std::string unknown_choice_message(const std::string& value, const std::vector<std::string>& choices) {
  return fmt::format("unknown value \"{}\"{}; expected one of: {}", value, did_you_mean(value, choices),
                     fmt::join(choices, ", "));
}

MapReader::MapReader(const Node& node) : node_(node) {
  if (node_.defined() && !node_.is_map()) {
    node_.error(fmt::format("expected a map of keys, got {}", describe(node_)));
    node_ = Node({}, node.path(), node.diagnostics(), node.location());
    return;
  }
  for (const Layer& layer : node_.layers()) {
    if (!layer.node.IsMap()) continue;
    std::set<std::string, std::less<>> seen;
    for (auto it = layer.node.begin(); it != layer.node.end(); ++it) {
      const std::string key = it->first.Scalar();
      if (!seen.insert(key).second) {
        node_.diagnostics()->error(location_of(it->first.Mark(), *layer.source), node_.child_path(key),
                                   "duplicate key (the first value would be silently lost)");
      }
    }
  }
}

bool MapReader::has(std::string_view key) { return child(key).defined(); }

Node MapReader::child(std::string_view key) {
  known_.emplace(key);
  return child_of(node_, key);
}

bool MapReader::read_count(std::string_view key, int64_t& out, IntRange range) {
  const Node value = child(key);
  return value.defined() && decode_count(value, out, range);
}

bool MapReader::require_count(std::string_view key, int64_t& out, IntRange range) {
  const Node value = child(key);
  if (!value.defined()) {
    missing(key);
    return false;
  }
  return decode_count(value, out, range);
}

void MapReader::missing(std::string_view key) const {
  // Inside a missing map only the map itself is reported (by its parent), not each of its keys.
  if (!node_.defined()) return;
  node_.diagnostics()->error(node_.location(), node_.child_path(key), "missing required key");
}

void MapReader::finish() {
  const std::vector<std::string> candidates(known_.begin(), known_.end());
  for (const Layer& layer : node_.layers()) {
    if (!layer.node.IsMap()) continue;
    for (auto it = layer.node.begin(); it != layer.node.end(); ++it) {
      const std::string key = it->first.Scalar();
      if (known_.count(key) != 0) continue;
      node_.diagnostics()->error(location_of(it->first.Mark(), *layer.source), node_.child_path(key),
                                 fmt::format("unknown key \"{}\"{}", key, did_you_mean(key, candidates)));
    }
  }
}

}  // namespace trainsim::config
