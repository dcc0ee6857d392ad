#include <limits>

#include "sim/validate/decode_internal.h"

namespace trainsim::validate::internal {
namespace {

using config::Diagnostics;
using config::Layer;
using config::Location;
using config::MapReader;
using config::Node;

void decode_shape_check(const Node& node, ShapeCheck& out) {
  MapReader m(node);
  m.require("kind", out.kind);
  m.require("name", out.name);
  m.require("source", out.source);
  if (m.require("cases", out.cases, "a list of case ids") &&
      (out.kind == ShapeKind::kRising ? out.cases.size() < 2 : out.cases.size() != 2)) {
    m.child("cases").error(out.kind == ShapeKind::kRising
                               ? "a rising check needs at least two cases, in order"
                               : "this check compares exactly two cases: [first, second]");
  }
  if (out.kind == ShapeKind::kBelow) {
    m.require("min_gap", out.min_gap, config::RealRange{0, std::numeric_limits<double>::infinity()});
    m.require("max_gap", out.max_gap, config::RealRange{0, std::numeric_limits<double>::infinity()});
    if (out.max_gap < out.min_gap) node.error("max_gap must be at least min_gap");
  }
  if (out.kind == ShapeKind::kRatioAtLeast) m.require("ratio", out.ratio, config::kPositiveReal);
  m.finish();
}

}  // namespace

void load_suite(const std::filesystem::path& path, Reader& reader, std::vector<Suite>& suites,
                std::vector<Located>& located) {
  Diagnostics& diagnostics = reader.diagnostics;
  std::vector<Layer> layers;
  const size_t before = diagnostics.count();
  if (!load_file(path, reader, layers)) return;
  Suite s;
  s.file = std::filesystem::absolute(path).lexically_normal();
  Located where;
  const Node root(layers, "", &diagnostics, Location{layers.front().source->name, 1, 1});
  MapReader r(root);
  r.child("schema_version");
  r.child("extends");
  where.id = r.child("suite").location();
  r.require("suite", s.name);
  r.read("description", s.description);
  const Node gate = r.child("gate");
  if (gate.defined()) {
    MapReader g(gate);
    Gate thresholds;
    const Node median = g.child("median_abs_error");
    const Node max = g.child("max_abs_error");
    if (!median.defined()) g.missing("median_abs_error");
    double max_value = 0;
    const bool max_ok = !max.defined() || decode_percent(max, max_value);
    if (max.defined()) thresholds.max_abs_error = max_value;
    if (median.defined() && decode_percent(median, thresholds.median_abs_error) && max_ok)
      s.gate = thresholds;
    g.finish();
  }
  const Node checks = r.child("shape_checks");
  if (checks.defined()) {
    if (!checks.is_sequence()) {
      checks.error("expected a list of shape checks");
    } else {
      for (const Node& element : checks.elements()) {
        ShapeCheck check;
        decode_shape_check(element, check);
        s.shape_checks.push_back(std::move(check));
        where.shape_checks.push_back(element.location());
      }
    }
  }
  r.finish();
  if (diagnostics.count() != before) return;
  suites.push_back(std::move(s));
  located.push_back(std::move(where));
}

}  // namespace trainsim::validate::internal
