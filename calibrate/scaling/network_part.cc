#include "calibrate/scaling/network_part.h"

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "sim/common/hash.h"
#include "sim/config/diagnostics.h"
#include "sim/config/units.h"

namespace trainsim::calibrate {
namespace {

class PartReader {
 public:
  PartReader(const std::filesystem::path& path, config::Diagnostics& diagnostics)
      : file_(path.string()), diagnostics_(diagnostics) {}

  config::Location at(const YAML::Node& node) const {
    const YAML::Mark mark = node.Mark();
    return mark.line < 0 ? config::Location{file_} : config::Location{file_, mark.line + 1, mark.column + 1};
  }
  void error(const YAML::Node& node, const std::string& key, const std::string& message) {
    diagnostics_.error(at(node), key, message);
  }

  std::string text(const YAML::Node& root, const char* key, bool required) {
    const YAML::Node node = root[key];
    if (!node) {
      if (required) error(root, key, "missing; every network part has one");
      return "";
    }
    if (!node.IsScalar()) {
      error(node, key, "expected text");
      return "";
    }
    return node.Scalar();
  }

  double quantity(const YAML::Node& root, const char* key, config::QuantityKind kind, bool required) {
    const std::string value = text(root, key, required);
    if (value.empty()) return 0;
    std::string problem;
    const std::optional<double> parsed = config::parse_quantity(value, kind, &problem);
    if (!parsed || *parsed <= 0) {
      error(root[key], key, parsed ? "must be positive" : problem);
      return 0;
    }
    numbers_.insert(key);
    return *parsed;
  }

  const std::set<std::string>& numbers() const { return numbers_; }

 private:
  std::string file_;
  config::Diagnostics& diagnostics_;
  std::set<std::string> numbers_;
};

}  // namespace

NetworkPart load_network_part(const std::filesystem::path& path) {
  const std::string file = path.string();
  std::ifstream in(path, std::ios::binary);
  std::stringstream bytes;
  if (in) bytes << in.rdbuf();
  if (!in) config::throw_config_error({file}, "", "cannot read network part");
  YAML::Node root;
  try {
    root = YAML::Load(bytes.str());
  } catch (const YAML::Exception& e) {
    config::throw_config_error({file, e.mark.line + 1, e.mark.column + 1}, "", "invalid YAML: " + e.msg);
  }
  if (!root.IsMap())
    config::throw_config_error({file, 1, 1}, "", "expected a map of keys (schema_version: 1 first)");
  config::Diagnostics diagnostics;
  PartReader r(path, diagnostics);
  NetworkPart part;
  part.path = std::filesystem::absolute(path).lexically_normal();
  part.content_hash = fnv1a64_hex(bytes.str());
  const std::vector<std::string> known = {"schema_version", "name",    "description", "tier",
                                          "bandwidth",      "latency", "line_rate",   "in_network_reduction",
                                          "sources"};
  for (auto it = root.begin(); it != root.end(); ++it) {
    const std::string key = it->first.Scalar();
    if (std::find(known.begin(), known.end(), key) == known.end()) {
      r.error(it->first, key, fmt::format("unknown key{}", config::did_you_mean(key, known)));
    }
  }
  if (r.text(root, "schema_version", true) != "1" && root["schema_version"]) {
    r.error(root["schema_version"], "schema_version",
            "unsupported schema_version; this trainsim reads version 1");
  }
  part.name = r.text(root, "name", true);
  part.description = r.text(root, "description", false);
  const std::string tier = r.text(root, "tier", true);
  if (tier == "intra_node") {
    part.tier = NetworkTier::kIntraNode;
  } else if (tier == "inter_node") {
    part.tier = NetworkTier::kInterNode;
  } else if (tier == "host") {
    part.tier = NetworkTier::kHost;
  } else if (!tier.empty()) {
    r.error(root["tier"], "tier", fmt::format("\"{}\": expected intra_node, inter_node or host", tier));
  }
  part.bandwidth_bytes_per_s = r.quantity(root, "bandwidth", config::QuantityKind::kBandwidth, true);
  part.latency_s = r.quantity(root, "latency", config::QuantityKind::kDuration, false);
  part.line_rate_bytes_per_s = r.quantity(root, "line_rate", config::QuantityKind::kBandwidth, false);
  const std::string reduction = r.text(root, "in_network_reduction", false);
  if (reduction == "true") {
    part.in_network_reduction = true;
  } else if (!reduction.empty() && reduction != "false") {
    r.error(root["in_network_reduction"], "in_network_reduction", "expected true or false");
  }
  const YAML::Node sources = root["sources"];
  if (!sources || !sources.IsMap()) {
    r.error(sources ? sources : root, "sources", "missing: every number of a network part needs a citation");
  } else {
    for (auto it = sources.begin(); it != sources.end(); ++it) {
      const std::string key = it->first.Scalar();
      const std::vector<std::string> cited = {"bandwidth", "latency", "line_rate", "in_network_reduction"};
      if (std::find(cited.begin(), cited.end(), key) == cited.end() || !root[key]) {
        r.error(it->first, "sources." + key,
                fmt::format("names \"{}\", which is not a value of this part{}", key,
                            config::did_you_mean(key, cited)));
        continue;
      }
      part.sources[key] = it->second.IsScalar() ? it->second.Scalar() : "";
    }
  }
  std::set<std::string> needing = r.numbers();
  if (part.in_network_reduction) needing.insert("in_network_reduction");
  for (const std::string& key : needing) {
    if (part.sources.count(key) == 0)
      r.error(root[key], key, fmt::format("no source; add `{}: <citation>` under sources", key));
  }
  diagnostics.throw_if_any();
  return part;
}

}  // namespace trainsim::calibrate
