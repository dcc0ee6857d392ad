#include "sim/sweep/sweep_file.h"

#include <charconv>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "sim/common/hash.h"
#include "sim/config/emit.h"
#include "sim/config/loader.h"
#include "sim/config/node.h"
#include "sim/config/units.h"

namespace trainsim::sweep {
namespace {

using config::display_name;
using config::Location;
using config::MapReader;
using config::Node;

constexpr int kSchemaVersion = 1;
constexpr size_t kMaxAxisValues = 1'000'000;

// State shared while decoding the axes: names and keys seen so far.
struct AxisNames {
  std::map<std::string, std::string> key_of_name;
  std::set<std::string> keys;
};

bool valid_name(const std::string& name) {
  static const std::regex kIdentifier("[A-Za-z_][A-Za-z0-9_]*");
  return std::regex_match(name, kIdentifier);
}

bool valid_key(const std::string& key) {
  static const std::regex kDotted("[A-Za-z_][A-Za-z0-9_]*(\\.[A-Za-z_][A-Za-z0-9_]*)*");
  return std::regex_match(key, kDotted);
}

void decode_values(const Node& node, Axis& axis) {
  if (!node.is_sequence() || node.elements().empty()) {
    node.error("expected a non-empty list of values, e.g. values: [1, 2, 4]");
    return;
  }
  for (const Node& element : node.elements()) {
    if (!element.is_scalar()) {
      element.error(
          "expected a single value (a number, a size or a word); sweep the keys of a map one by one");
      continue;
    }
    axis.values.push_back({element.scalar(), element.location()});
  }
}

void decode_range(const Node& node, Axis& axis) {
  MapReader r(node);
  int64_t from = 0, to = 0, step = 0, times = 0;
  const bool ok_from = r.require_count("from", from);
  const bool ok_to = r.require_count("to", to);
  const bool has_step = r.read_count("step", step, config::kPositive);
  const bool has_times = r.read_count("times", times, config::IntRange{2});
  const Node step_node = r.child("step"), times_node = r.child("times");
  r.finish();
  if (step_node.defined() == times_node.defined()) {
    node.error("give exactly one of step (1, 3, 5, ...) or times (1, 2, 4, ...)");
    return;
  }
  if (!ok_from || !ok_to || (!has_step && !has_times)) return;
  if (from > to) {
    node.error(fmt::format("from {} is above to {}; write the smaller bound first", from, to));
    return;
  }
  if (has_times && from < 1) {
    node.error("a geometric range (times) needs from >= 1");
    return;
  }
  for (int64_t v = from; v <= to; v = has_step ? v + step : v * times) {
    if (axis.values.size() >= kMaxAxisValues) {
      node.error(fmt::format("more than {} values; use a coarser step", kMaxAxisValues));
      return;
    }
    axis.values.push_back({std::to_string(v), node.location()});
    if (has_times && v > to / times) break;
  }
}

void decode_entry(const Node& node, AxisGroup& out, AxisNames& names);

void decode_members(const Node& node, AxisGroup& out, AxisNames& names) {
  if (!node.is_sequence() || node.elements().empty()) {
    node.error("expected a non-empty list of axes, e.g. [{key: parallelism.tp, values: [1, 2]}, ...]");
    return;
  }
  for (const Node& element : node.elements()) {
    AxisGroup member;
    decode_entry(element, member, names);
    out.members.push_back(std::move(member));
  }
}

size_t length(const AxisGroup& g) {
  switch (g.kind) {
    case AxisGroup::Kind::kAxis:
      return g.axis.values.size();
    case AxisGroup::Kind::kZip:
      return g.members.empty() ? 0 : length(g.members.front());
    case AxisGroup::Kind::kProduct: {
      size_t n = 1;
      for (const AxisGroup& m : g.members) n *= length(m);
      return n;
    }
  }
  return 0;
}

void decode_entry(const Node& node, AxisGroup& out, AxisNames& names) {
  MapReader r(node);
  if (!node.is_map()) return;
  const Node zip = r.child("zip"), product = r.child("product");
  if (zip.defined() || product.defined()) {
    if (zip.defined() && product.defined()) node.error("an entry is either a zip or a product, not both");
    out.kind = zip.defined() ? AxisGroup::Kind::kZip : AxisGroup::Kind::kProduct;
    decode_members(zip.defined() ? zip : product, out, names);
    r.finish();
    if (out.kind == AxisGroup::Kind::kZip) {
      std::vector<size_t> lengths;
      for (const AxisGroup& m : out.members) lengths.push_back(length(m));
      if (std::adjacent_find(lengths.begin(), lengths.end(), std::not_equal_to<>()) != lengths.end()) {
        zip.error(fmt::format("the members of a zip need the same number of values; they have {}",
                              fmt::join(lengths, ", ")));
      }
    }
    return;
  }
  out.kind = AxisGroup::Kind::kAxis;
  Axis& axis = out.axis;
  const bool has_key = r.require("key", axis.key);
  if (has_key && !valid_key(axis.key)) {
    r.child("key").error(fmt::format("\"{}\" is not a dotted scenario key such as parallelism.tp", axis.key));
  }
  axis.name = axis.key.substr(axis.key.rfind('.') + 1);
  const Node name = r.child("name");
  if (name.defined() && decode(name, axis.name) && !valid_name(axis.name)) {
    name.error(fmt::format("\"{}\" is not a name: use letters, digits and _ (not first a digit)", axis.name));
  }
  const Node values = r.child("values"), range = r.child("range");
  if (values.defined() == range.defined()) {
    node.error("an axis needs exactly one of values: [...] or range: {from, to, step|times}");
  } else if (values.defined()) {
    decode_values(values, axis);
  } else {
    decode_range(range, axis);
  }
  r.finish();
  if (!has_key) return;
  const Node& where = name.defined() ? name : r.child("key");
  if (!names.keys.insert(axis.key).second) {
    r.child("key").error(fmt::format("key {} is swept twice; give all its values in one axis", axis.key));
  } else if (const auto it = names.key_of_name.find(axis.name); it != names.key_of_name.end()) {
    where.error(fmt::format("two axes are named \"{}\" ({} and {}); give one a name: of its own", axis.name,
                            it->second, axis.key));
  } else {
    names.key_of_name[axis.name] = axis.key;
  }
}

// Every scalar of a resolved scenario under its dotted key.
void flatten(const YAML::Node& node, const std::string& prefix, std::map<std::string, Value>& out) {
  if (node.IsMap()) {
    for (auto it = node.begin(); it != node.end(); ++it) {
      flatten(it->second, prefix.empty() ? it->first.Scalar() : prefix + "." + it->first.Scalar(), out);
    }
  } else if (node.IsScalar()) {
    out[prefix] = scalar_value(node.Scalar());
  }
}

// Where a filter's text starts: after the opening quote of a quoted scalar.
Location text_location(const Node& node) {
  Location at = node.location();
  if (node.is_scalar() && node.layers().front().node.Tag() == "!") at.column += 1;
  return at;
}

void decode_filters(const Node& node, SweepFile& out) {
  std::vector<Node> items;
  if (node.is_scalar()) {
    items.push_back(node);
  } else if (node.is_sequence()) {
    items = node.elements();
  } else {
    node.error("expected an expression or a list of them, e.g. filter: [\"tp * pp <= 64\"]");
    return;
  }
  for (const Node& item : items) {
    std::string text;
    if (!decode(item, text)) continue;
    const Location at = text_location(item);
    try {
      out.filters.push_back({item.path(), text, Expression::parse(text), at});
    } catch (const ExpressionError& e) {
      item.diagnostics()->error({at.file, at.line, at.column + static_cast<int>(e.offset())}, item.path(),
                                fmt::format("in filter \"{}\": {}", text, e.what()));
    }
  }
}

// Filters may only name axes and scenario keys.
void check_filter_names(const SweepFile& sweep, config::Diagnostics& diagnostics) {
  std::vector<std::string> axis_names;
  std::set<std::string> axis_words;
  for (const Axis* axis : sweep.axis_list()) {
    axis_words.insert(axis->name);
    axis_words.insert(axis->key);
    axis_names.push_back(axis->name);
  }
  std::vector<std::string> known = axis_names;
  for (const auto& [key, value] : sweep.base_fields) known.push_back(key);
  for (const Filter& f : sweep.filters) {
    for (const NameUse& use : f.expression.names()) {
      if (axis_words.count(use.name) != 0 || sweep.base_fields.count(use.name) != 0) continue;
      diagnostics.error(
          {f.location.file, f.location.line, f.location.column + static_cast<int>(use.offset)}, f.path,
          fmt::format("unknown name \"{}\"{}; a filter names an axis ({}) or a scenario key such "
                      "as model.heads",
                      use.name, config::did_you_mean(use.name, known), fmt::join(axis_names, ", ")));
    }
  }
}

}  // namespace

config::Scenario load_point_scenario(const SweepFile& sweep, const std::vector<Setting>& settings) {
  config::Scenario scenario =
      config::load_scenario_with(sweep.base, settings, sweep.path.parent_path(), sweep.display_name);
  scenario.path = sweep.base;
  scenario.content_hash = sweep.base_content_hash;
  return scenario;
}

std::vector<const Axis*> SweepFile::axis_list() const {
  std::vector<const Axis*> out;
  const std::function<void(const AxisGroup&)> walk = [&](const AxisGroup& g) {
    if (g.kind == AxisGroup::Kind::kAxis) {
      out.push_back(&g.axis);
    } else {
      for (const AxisGroup& m : g.members) walk(m);
    }
  };
  walk(axes);
  return out;
}

Value scalar_value(const std::string& text) {
  std::string error;
  if (const std::optional<int64_t> count = config::parse_count(text, &error)) {
    return Value::of(static_cast<double>(*count));
  }
  double number = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, number);
  if (!text.empty() && ec == std::errc() && ptr == end) return Value::of(number);
  if (text == "true") return Value::of(1.0);
  if (text == "false") return Value::of(0.0);
  for (const config::QuantityKind kind :
       {config::QuantityKind::kBytes, config::QuantityKind::kBandwidth, config::QuantityKind::kDuration,
        config::QuantityKind::kFlopRate, config::QuantityKind::kFrequency, config::QuantityKind::kPower}) {
    if (const std::optional<double> q = config::parse_quantity(text, kind, &error)) return Value::of(*q);
  }
  return Value::of(text);
}

SweepFile load_sweep(const std::filesystem::path& path) {
  SweepFile out;
  out.path = std::filesystem::absolute(path).lexically_normal();
  out.display_name = display_name(out.path);
  std::ifstream in(out.path, std::ios::binary);
  std::stringstream bytes;
  if (in) bytes << in.rdbuf();
  if (!in) {
    config::throw_config_error(
        {out.display_name}, "",
        fmt::format("cannot read the sweep file ({})", std::filesystem::exists(out.path)
                                                           ? "permission denied or not a regular file"
                                                           : "no such file"));
  }
  const std::string text = bytes.str();
  out.content_hash = fnv1a64_hex(text);
  auto source = std::make_shared<config::Source>(config::Source{out.display_name, out.path.parent_path(), 0});
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    config::throw_config_error({out.display_name, e.mark.line + 1, e.mark.column + 1}, "",
                               fmt::format("invalid YAML: {}", e.msg));
  }
  config::Diagnostics diagnostics;
  const Node top({{root, source}}, "", &diagnostics, Location{out.display_name, 1, 1});
  if (!root.IsMap()) {
    top.error("expected a map of keys at the top level (a sweep file starts with schema_version: 1)");
    diagnostics.throw_if_any();
  }
  MapReader r(top);
  int64_t version = 0;
  if (r.require("schema_version", version) && version != kSchemaVersion) {
    r.child("schema_version")
        .error(fmt::format("unsupported schema_version {}; this trainsim reads version {}", version,
                           kSchemaVersion));
  }
  out.name = out.path.stem().string();
  r.read("name", out.name);
  r.read("description", out.description);
  if (r.require("base", out.base)) out.base_text = r.child("base").scalar();
  const Node set = r.child("set");
  if (set.defined()) {
    if (!set.is_map()) {
      set.error("expected a map of dotted scenario keys to values, e.g. set: {parallelism.zero_stage: 1}");
    } else {
      for (auto it = set.layers().front().node.begin(); it != set.layers().front().node.end(); ++it) {
        const std::string key = it->first.Scalar();
        const Node value({{it->second, source}}, set.child_path(key), &diagnostics);
        if (!valid_key(key)) {
          value.error(fmt::format("\"{}\" is not a dotted scenario key such as parallelism.tp", key));
        } else if (!value.is_scalar()) {
          value.error("expected a single value; set the keys of a map one by one (a.b: 1, a.c: 2)");
        } else {
          out.set.push_back({key, value.scalar(), value.location()});
        }
      }
    }
  }
  out.axes.kind = AxisGroup::Kind::kProduct;
  const Node axes = r.child("axes");
  AxisNames names;
  if (!axes.defined()) {
    r.missing("axes");
  } else {
    decode_members(axes, out.axes, names);
  }
  const Node filter = r.child("filter");
  if (filter.defined()) decode_filters(filter, out);
  r.finish();
  for (const Setting& s : out.set) {
    if (names.keys.count(s.key) != 0) {
      diagnostics.error(s.location, "set." + s.key,
                        "this key is also an axis; drop it from set (the axis gives every point its value)");
    }
  }
  if (out.base.empty()) diagnostics.throw_if_any();  // no base: nothing more to check against

  // The base scenario alone: its own problems are reported in it.
  config::Scenario base;
  try {
    base = config::load_scenario(out.base);
  } catch (const config::ConfigError& e) {
    for (const config::Diagnostic& d : e.diagnostics()) diagnostics.error(d.location, d.path, d.message);
    diagnostics.throw_if_any();
  }
  out.base_content_hash = base.content_hash;
  out.base_hash = fnv1a64_hex(base.cluster.hardware.content_hash,
                              fnv1a64_hex(base.cluster.topology.content_hash, base.content_hash));
  // The settings' own values are checked once here; rules across keys (tp·pp·dp = GPUs, ...) only hold
  // with each point's axis values, so they are checked per point.
  try {
    load_point_scenario(out, out.set);
  } catch (const config::ConfigError& e) {
    for (const config::Diagnostic& d : e.diagnostics()) {
      for (const Setting& s : out.set) {
        if (d.path == s.key) diagnostics.error(d.location, d.path, d.message);
      }
    }
  }
  flatten(YAML::Load(config::to_yaml(base, config::Defaults::kAsGiven)), "", out.base_fields);
  for (const Setting& s : out.set) out.base_fields[s.key] = scalar_value(s.value);
  check_filter_names(out, diagnostics);
  diagnostics.throw_if_any();
  return out;
}

}  // namespace trainsim::sweep
