// Decoding of hardware-profile files, including the rule that every number names its source.
#include <set>

#include <fmt/format.h>

#include "sim/config/decode.h"

namespace trainsim::config {

std::optional<double> HardwareProfile::peak_flops_per_s(Dtype dtype) const {
  const auto it = gpu.peak_flops_per_s.find(dtype);
  if (it == gpu.peak_flops_per_s.end()) return std::nullopt;
  return it->second;
}

std::string HardwareProfile::source_of(const std::string& key) const {
  std::string best;
  size_t best_length = 0;
  for (const auto& [prefix, source] : sources) {
    const bool covers =
        key == prefix || (key.size() > prefix.size() && key.compare(0, prefix.size(), prefix) == 0 &&
                          key[prefix.size()] == '.');
    if (covers && prefix.size() >= best_length) {
      best = source;
      best_length = prefix.size();
    }
  }
  return best;
}

namespace internal {
namespace {

// Top-level keys that are metadata rather than numbers about the hardware.
const std::set<std::string, std::less<>> kMetadataKeys = {"schema_version", "extends", "name", "provenance",
                                                          "sources"};

// Every scalar leaf below `node` (keys merged across layers), as (dotted path, node).
void collect_leaves(const Node& node, std::vector<Node>& out) {
  if (node.is_scalar()) {
    out.push_back(node);
    return;
  }
  if (node.is_sequence()) {
    for (const Node& e : node.elements()) collect_leaves(e, out);
    return;
  }
  if (!node.is_map()) return;
  std::set<std::string> keys;
  for (const Layer& layer : node.layers()) {
    if (!layer.node.IsMap()) continue;
    for (auto it = layer.node.begin(); it != layer.node.end(); ++it) keys.insert(it->first.Scalar());
  }
  Diagnostics scratch;  // walking must not report anything: the decoders do
  Node quiet(node.layers(), node.path(), &scratch, node.location());
  MapReader reader(quiet);
  for (const std::string& key : keys) {
    if (node.path().empty() && kMetadataKeys.count(key) != 0) continue;
    const Node child = reader.child(key);
    collect_leaves(Node(child.layers(), child.path(), node.diagnostics(), child.location()), out);
  }
}

void decode_gpu(MapReader& m, GpuSpec& out) {
  m.require("name", out.name);
  m.read("sm_count", out.sm_count, kPositive);
  m.read("clock", out.clock_hz, QuantityKind::kFrequency, kPositiveReal);
  const Node peaks = m.child("peak_flops");
  if (!peaks.defined()) m.missing("peak_flops");
  MapReader p(peaks);
  for (const auto& [dtype, name] : EnumNames<Dtype>::kNames) {
    double value = 0;
    if (p.read(name, value, QuantityKind::kFlopRate, kPositiveReal)) out.peak_flops_per_s[dtype] = value;
  }
  p.finish();
  const Node hbm = m.child("hbm");
  if (!hbm.defined()) m.missing("hbm");
  MapReader h(hbm);
  h.require("capacity", out.hbm_capacity_bytes, QuantityKind::kBytes, kPositiveReal);
  h.require("bandwidth", out.hbm_bandwidth_bytes_per_s, QuantityKind::kBandwidth, kPositiveReal);
  h.finish();
  m.finish();
}

void decode_host_link(MapReader& m, HostLink& out) {
  m.read("pcie_generation", out.pcie_generation, IntRange{1, 7});
  m.require("h2d_bandwidth", out.h2d_bandwidth_bytes_per_s, QuantityKind::kBandwidth, kPositiveReal);
  m.require("d2h_bandwidth", out.d2h_bandwidth_bytes_per_s, QuantityKind::kBandwidth, kPositiveReal);
  m.read("latency", out.latency_s, QuantityKind::kDuration);
  m.finish();
}

void decode_provenance(MapReader& m, Provenance& out) {
  m.require("kind", out.kind);
  m.read("date", out.date);
  m.read("tool_version", out.tool_version);
  m.read("command", out.command);
  m.read("notes", out.notes);
  m.finish();
}

// Every number needs a source: a `sources` key equal to its dotted path or to a prefix of it; and
// every `sources` key must name something in the file.
void check_sources(const Node& root, const Node& sources, HardwareProfile& out) {
  std::vector<Node> leaves;
  collect_leaves(root, leaves);
  std::set<std::string> paths;
  for (const Node& leaf : leaves) {  // each leaf path and all its prefixes
    const std::string& path = leaf.path();
    for (size_t dot = path.find('.'); dot != std::string::npos; dot = path.find('.', dot + 1)) {
      paths.insert(path.substr(0, dot));
    }
    paths.insert(path);
  }
  MapReader s(sources);
  for (const Layer& layer : sources.layers()) {
    if (!layer.node.IsMap()) continue;
    for (auto it = layer.node.begin(); it != layer.node.end(); ++it) {
      const std::string key = it->first.Scalar();
      std::string citation;
      const Node value = s.child(key);
      if (!decode(value, citation) || out.sources.count(key) != 0) continue;
      if (paths.count(key) == 0) {
        value.error(fmt::format("sources names \"{}\", which is not a key of this profile{}", key,
                                did_you_mean(key, std::vector<std::string>(paths.begin(), paths.end()))));
      }
      out.sources[key] = citation;
    }
  }
  for (const Node& leaf : leaves) {
    if (out.source_of(leaf.path()).empty()) {
      leaf.error(
          fmt::format("no source for this value; add `{}: <datasheet, paper or \"measured\">` (or a "
                      "shorter prefix of it) under sources",
                      leaf.path()));
    }
  }
}

}  // namespace

void decode_hardware(const Node& root, HardwareProfile& out) {
  MapReader r(root);
  r.child("schema_version");
  r.child("extends");
  r.require("name", out.name);
  const Node gpu = r.child("gpu");
  if (!gpu.defined()) r.missing("gpu");
  MapReader g(gpu);
  decode_gpu(g, out.gpu);
  const Node host_link = r.child("host_link");
  if (!host_link.defined()) r.missing("host_link");
  MapReader h(host_link);
  decode_host_link(h, out.host_link);
  r.read("host_memory", out.host_memory_bytes, QuantityKind::kBytes, kPositiveReal);
  const Node provenance = r.child("provenance");
  if (!provenance.defined()) r.missing("provenance");
  MapReader p(provenance);
  decode_provenance(p, out.provenance);
  const Node sources = r.child("sources");
  if (!sources.defined()) {
    r.missing("sources");
  } else {
    check_sources(root, sources, out);
  }
  r.finish();
}

}  // namespace internal
}  // namespace trainsim::config
