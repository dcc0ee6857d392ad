#include <limits>
#include <map>

#include <fmt/format.h>

#include "sim/validate/decode_internal.h"

namespace trainsim::validate::internal {
namespace {

using config::Diagnostics;
using config::Layer;
using config::Location;
using config::MapReader;
using config::Node;

void decode_tolerance(const Node& node, Tolerance& out) {
  MapReader m(node);
  const bool relative = m.has("relative");
  const bool absolute = m.has("absolute");
  if (relative == absolute) {
    node.error(
        "give exactly one of relative (a percentage, e.g. relative: 5%) or absolute (in the "
        "metric's unit, e.g. absolute: 0.03)");
  } else if (relative) {
    out.relative = true;
    decode_percent(m.child("relative"), out.value);
  } else {
    out.relative = false;
    m.read("absolute", out.value, config::RealRange{0, std::numeric_limits<double>::infinity()});
  }
  m.finish();
}

// Checks that nothing in a `set` names a file: paths in a scenario resolve against the file that
// writes them, so they belong in the scenario file.
void check_set(const Node& set) {
  if (!set.defined()) return;
  if (!set.is_map()) {
    set.error("expected a map of scenario sections, e.g. set: {parallelism: {recompute: full}}");
    return;
  }
  Diagnostics scratch;
  MapReader top(Node(set.layers(), set.path(), &scratch, set.location()));
  MapReader cluster(top.child("cluster"));
  for (const char* key : {"topology", "hardware"}) {
    const Node value = cluster.child(key);
    if (value.defined()) {
      set.diagnostics()->error(value.location(), value.path(),
                               "file references cannot be set by a case; put them in the scenario file");
    }
  }
}

void decode_scenario_ref(const Node& node, ScenarioRef& out) {
  MapReader m(node);
  out.location = node.location();
  m.require("file", out.file);
  const Node set = m.child("set");
  check_set(set);
  out.set = set.layers();
  m.finish();
}

void decode_validation(MapReader& m, Case& c, Located& where) {
  where.id = m.child("id").location();
  m.require("id", c.id);
  m.require("suite", c.suite);
  {
    const Node source = m.child("source");
    if (!source.defined()) m.missing("source");
    MapReader s(source);
    s.require("paper", c.paper);
    s.require("where", c.where);
    s.finish();
  }
  m.require("confidence", c.confidence);
  m.require("metric", c.metric);
  m.read("comparison", c.comparison);
  if (c.metric == Metric::kMaxSequenceTokens) {
    int64_t tokens = 0;
    if (m.require_count("published", tokens, config::kPositive)) c.published = static_cast<double>(tokens);
  } else {
    m.require("published", c.published, config::kPositiveReal);
  }
  {
    const Node tolerance = m.child("tolerance");
    if (!tolerance.defined()) {
      m.missing("tolerance");
    } else {
      decode_tolerance(tolerance, c.tolerance);
    }
  }
  double calculon = 0;
  if (m.read("calculon", calculon, config::kPositiveReal)) c.calculon = calculon;
  m.read("network", c.network);
  Role role = Role::kValidation;
  if (m.read("role", role)) c.role = role;
  const Node search = m.child("search");
  if (search.defined()) {
    MapReader s(search);
    SequenceSearch range;
    const bool from = s.require_count("from", range.from_tokens, config::kPositive);
    const bool to = s.require_count("to", range.to_tokens, config::kPositive);
    s.finish();
    if (from && to && range.to_tokens < range.from_tokens) {
      search.error("search.to must be at least search.from (lengths are tried from, 2 from, 4 from, ...)");
    }
    c.search = range;
  }
  if (c.metric == Metric::kMaxSequenceTokens && !search.defined()) {
    m.node().error(
        "max_sequence_tokens needs search: {from: ..., to: ...}, the sequence lengths to try (doubling)");
  }
  if (c.metric != Metric::kMaxSequenceTokens && search.defined()) {
    search.error("search only applies to metric max_sequence_tokens");
  }
  const Node assumptions = m.child("assumptions");
  if (assumptions.defined()) {
    if (!assumptions.is_map()) {
      assumptions.error("expected a map: the setting the paper leaves open -> the choice and why");
    } else {
      // Base files first, so a case lists shared assumptions before its own; a key in a later layer
      // replaces the text but keeps its place.
      std::map<std::string, size_t> index;
      for (auto layer = assumptions.layers().rbegin(); layer != assumptions.layers().rend(); ++layer) {
        for (auto it = layer->node.begin(); it != layer->node.end(); ++it) {
          const std::string key = it->first.Scalar();
          const Node value({{it->second, layer->source}}, assumptions.child_path(key),
                           m.node().diagnostics());
          std::string text;
          if (!config::decode(value, text)) continue;
          const auto [slot, inserted] = index.emplace(key, c.assumptions.size());
          if (inserted) {
            c.assumptions.push_back({key, text});
          } else {
            c.assumptions[slot->second].text = text;
          }
        }
      }
    }
  }
  m.finish();
}

}  // namespace

void load_case(const std::filesystem::path& path, Reader& reader, std::vector<Case>& cases,
               std::vector<Located>& located) {
  Diagnostics& diagnostics = reader.diagnostics;
  std::vector<Layer> layers;
  const size_t before = diagnostics.count();
  if (!load_file(path, reader, layers)) return;
  Case c;
  c.file = std::filesystem::absolute(path).lexically_normal();
  c.display_file = layers.front().source->name;
  Located where;
  const Node root(layers, "", &diagnostics, Location{c.display_file, 1, 1});
  MapReader r(root);
  r.child("schema_version");
  r.child("extends");
  const Node validation = r.child("validation");
  if (!validation.defined()) {
    r.missing("validation");
  } else {
    MapReader m(validation);
    decode_validation(m, c, where);
  }
  const Node scenario = r.child("scenario");
  if (!scenario.defined()) {
    r.missing("scenario");
  } else {
    decode_scenario_ref(scenario, c.scenario);
  }
  const Node baseline = r.child("baseline");
  if (baseline.defined()) {
    ScenarioRef ref;
    decode_scenario_ref(baseline, ref);
    c.baseline = ref;
    if (c.metric != Metric::kCommVolumeRatio) {
      baseline.error("baseline only applies to metric comm_volume_ratio");
    }
  } else if (validation.defined() && c.metric == Metric::kCommVolumeRatio) {
    r.missing("baseline");
  }
  r.finish();
  if (diagnostics.count() != before) return;
  cases.push_back(std::move(c));
  located.push_back(std::move(where));
}

}  // namespace trainsim::validate::internal
