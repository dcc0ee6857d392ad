// Decoding of hardware-profile files, including the rule that every number names its source.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <set>
#include <string_view>
#include <tuple>

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
                          (key[prefix.size()] == '.' || key[prefix.size()] == '['));
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

void decode_compute(MapReader& m, ComputeModel& out) {
  const RealRange fraction{0, 1, true};
  m.read("gemm_efficiency", out.gemm_efficiency, fraction);
  m.read("gemm_efficiency_fp8", out.gemm_efficiency_fp8, fraction);
  m.read("attention_forward_efficiency", out.attention_forward_efficiency, fraction);
  m.read("attention_backward_efficiency", out.attention_backward_efficiency, fraction);
  m.read("attention_kernel", out.attention_kernel);
  m.read("memory_efficiency", out.memory_efficiency, fraction);
  m.read("kernel_launch", out.kernel_launch_s, QuantityKind::kDuration);
  m.read("host_sync", out.host_sync_s, QuantityKind::kDuration);
  m.read("comm_compute_slowdown", out.comm_compute_slowdown, RealRange{0, 1});
  m.finish();
}

void decode_runtime_memory(MapReader& m, RuntimeMemory& out) {
  const RealRange bytes{0, std::numeric_limits<double>::infinity()};
  m.read("context", out.context_bytes, QuantityKind::kBytes, bytes);
  m.read("collective_communicator", out.collective_communicator_bytes, QuantityKind::kBytes, bytes);
  m.read("p2p_peer_in_node", out.p2p_peer_in_node_bytes, QuantityKind::kBytes, bytes);
  m.read("p2p_peer_across_nodes", out.p2p_peer_across_nodes_bytes, QuantityKind::kBytes, bytes);
  m.finish();
}

void decode_power(MapReader& m, GpuPower& out) {
  m.require("limit", out.limit_w, QuantityKind::kPower, kPositiveReal);
  m.require("idle", out.idle_w, QuantityKind::kPower, kPositiveReal);
  struct State {
    const char* key;
    double* watts;
  };
  for (const State& s : {State{"compute", &out.compute_w}, State{"memory", &out.memory_w},
                         State{"communication", &out.communication_w}}) {
    const Node value = m.child(s.key);
    if (!value.defined()) {
      m.missing(s.key);
    } else if (decode(value, *s.watts, QuantityKind::kPower, kPositiveReal) && out.limit_w > 0 &&
               out.idle_w > 0 && (*s.watts < out.idle_w || *s.watts > out.limit_w)) {
      value.error(fmt::format(
          "{} must lie between idle ({}) and limit ({}): a busy GPU draws at least what an "
          "idle one does, and the board caps it at its limit",
          format_quantity(*s.watts, QuantityKind::kPower), format_quantity(out.idle_w, QuantityKind::kPower),
          format_quantity(out.limit_w, QuantityKind::kPower)));
    }
  }
  m.finish();
}

// Decodes a list of maps, one element at a time, with `decode_one(reader, element)`.
template <class T, class F>
void decode_list(const Node& node, std::vector<T>& out, const F& decode_one) {
  if (!node.defined()) return;
  if (!node.is_sequence()) {
    node.error("expected a list of measurements");
    return;
  }
  for (const Node& element : node.elements()) {
    MapReader r(element);
    T value;
    decode_one(r, value);
    r.finish();
    out.push_back(value);
  }
}

// A spread duration of a sample row: positive, and at most (`below_median`) or at least its median
// time `median_s` (unchecked when 0: the time did not decode). `meaning` says what the key is.
void decode_spread_bound(MapReader& m, std::string_view key, bool below_median, double median_s,
                         std::string_view meaning, double& out) {
  const Node value = m.child(key);
  const bool decoded = value.defined() && decode(value, out, QuantityKind::kDuration, kPositiveReal);
  if (!decoded || !(median_s > 0) || (below_median ? out <= median_s : out >= median_s)) return;
  value.error(fmt::format("must be at {} time ({}), got {}: {} is {}, time their median",
                          below_median ? "most" : "least", format_quantity(median_s, QuantityKind::kDuration),
                          value.scalar(), key, meaning));
}

// The optional spread keys of a sample row, after its `time` (`median_s`, 0 when it did not decode).
void decode_spread(MapReader& m, double median_s, SampleSpread& out) {
  decode_spread_bound(m, "min", true, median_s, "the fastest repetition", out.min_s);
  decode_spread_bound(m, "p90", false, median_s, "the 90th percentile of the repetitions", out.p90_s);
  m.read("repetitions", out.repetitions, kPositive);
}

void decode_samples(MapReader& r, HardwareProfile& out) {
  decode_list(r.child("gemm_samples"), out.gemm_samples, [](MapReader& m, GemmSample& s) {
    m.require("dtype", s.dtype);
    m.require("m", s.m, kPositive);
    m.require("n", s.n, kPositive);
    m.require("k", s.k, kPositive);
    m.require("time", s.duration_s, QuantityKind::kDuration, kPositiveReal);
    decode_spread(m, s.duration_s, s.spread);
  });
  decode_list(r.child("attention_samples"), out.attention_samples, [](MapReader& m, AttentionSample& s) {
    m.require("pass", s.pass);
    m.require("causal", s.causal);
    m.require("dtype", s.dtype);
    m.read("batch", s.batch, kPositive);
    m.require("heads", s.heads, kPositive);
    s.kv_heads = s.heads;
    m.read("kv_heads", s.kv_heads, kPositive);
    m.require_count("q_len", s.q_len, kPositive);
    m.require_count("kv_len", s.kv_len, kPositive);
    m.require("head_dim", s.head_dim, kPositive);
    m.require("time", s.duration_s, QuantityKind::kDuration, kPositiveReal);
    decode_spread(m, s.duration_s, s.spread);
  });
  decode_list(r.child("collective_samples"), out.collective_samples, [](MapReader& m, CollectiveSample& s) {
    m.require("kind", s.kind);
    m.require("ranks", s.ranks, kPositive);
    m.read("nodes", s.nodes, kPositive);
    m.require("bytes", s.bytes, QuantityKind::kBytes);
    m.require("time", s.duration_s, QuantityKind::kDuration, kPositiveReal);
    decode_spread(m, s.duration_s, s.spread);
    m.read("algorithm", s.algorithm);
  });
  decode_list(r.child("collective_fits"), out.collective_fits, [](MapReader& m, CollectiveFit& f) {
    m.require("kind", f.kind);
    m.require("ranks", f.ranks, kPositive);
    m.read("nodes", f.nodes, kPositive);
    m.require("min_bytes", f.min_bytes, QuantityKind::kBytes);
    m.require("max_bytes", f.max_bytes, QuantityKind::kBytes);
    m.require("latency", f.latency_s, QuantityKind::kDuration);
    m.require("bus_bandwidth", f.bus_bandwidth_bytes_per_s, QuantityKind::kBandwidth, kPositiveReal);
    m.read("algorithm", f.algorithm);
    if (f.max_bytes < f.min_bytes) m.node().error("max_bytes must not be below min_bytes");
  });
  decode_list(r.child("copy_samples"), out.copy_samples, [](MapReader& m, CopySample& s) {
    m.require("direction", s.direction);
    m.read("concurrent_gpus", s.concurrent_gpus, kPositive);
    m.require("bytes", s.bytes, QuantityKind::kBytes, kPositiveReal);
    m.require("time", s.duration_s, QuantityKind::kDuration, kPositiveReal);
    decode_spread(m, s.duration_s, s.spread);
  });
}

void decode_software(MapReader& m, SoftwareVersions& out) {
  m.read("driver", out.driver);
  m.read("cuda_runtime", out.cuda_runtime);
  m.read("blas", out.blas);
  m.read("collectives", out.collectives);
  m.read("compiler", out.compiler);
  m.read("attention_kernel", out.attention_kernel);
  m.finish();
}

void decode_host(MapReader& m, HostInfo& out) {
  m.read("cpu", out.cpu);
  m.read("name", out.name);
  m.finish();
}

void decode_provenance(MapReader& m, Provenance& out) {
  m.require("kind", out.kind);
  m.read("date", out.date);
  m.read("tool_version", out.tool_version);
  m.read("command", out.command);
  m.read("notes", out.notes);
  MapReader software(m.child("software"));
  decode_software(software, out.software);
  MapReader host(m.child("host"));
  decode_host(host, out.host);
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
    for (size_t dot = path.find_first_of(".["); dot != std::string::npos;
         dot = path.find_first_of(".[", dot + 1)) {
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
  // An uncovered number is reported at its shallowest ancestor under which nothing is cited, so a
  // whole uncited table is one error, not one per cell.
  const auto cites_within = [&out](const std::string& ancestor) {
    for (const auto& [key, citation] : out.sources) {
      if (key.compare(0, ancestor.size(), ancestor) == 0 &&
          (key.size() == ancestor.size() || key[ancestor.size()] == '.' || key[ancestor.size()] == '[')) {
        return true;
      }
    }
    return false;
  };
  std::sort(leaves.begin(), leaves.end(), [](const Node& a, const Node& b) {
    const Location la = a.location();
    const Location lb = b.location();
    return std::tie(la.line, la.column) < std::tie(lb.line, lb.column);
  });
  std::set<std::string> reported;
  for (const Node& leaf : leaves) {
    const std::string& path = leaf.path();
    if (!out.source_of(path).empty() || set_by_what_if(out.what_if, path)) continue;
    std::string ancestor = path;
    for (size_t cut = path.find_first_of(".["); cut != std::string::npos;
         cut = path.find_first_of(".[", cut + 1)) {
      if (!cites_within(path.substr(0, cut))) {
        ancestor = path.substr(0, cut);
        break;
      }
    }
    if (!reported.insert(ancestor).second) continue;
    leaf.diagnostics()->error(
        leaf.location(), ancestor,
        fmt::format("no source for this {}; add `{}: <datasheet, paper or \"measured\">` "
                    "under sources",
                    ancestor == path ? "value" : "section", ancestor));
  }
}

}  // namespace

// A price in US dollars: a positive decimal number directly followed by `unit` ("2.50USD").
bool decode_usd(const Node& node, std::string_view unit, std::string_view example, double& out) {
  std::string text;
  if (!decode(node, text)) return false;
  const bool has_unit =
      text.size() > unit.size() && text.compare(text.size() - unit.size(), unit.size(), unit) == 0;
  const std::string number = has_unit ? text.substr(0, text.size() - unit.size()) : "";
  double value = 0;
  const auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), value);
  if (!has_unit || number.empty() || ec != std::errc() || end != number.data() + number.size() ||
      !(value > 0) || !std::isfinite(value)) {
    node.error(fmt::format("expected a positive price in US dollars, e.g. {}; got \"{}\"", example, text));
    return false;
  }
  out = value;
  return true;
}

void decode_cost(MapReader& m, Cost& out) {
  const Node price = m.child("price_per_gpu_hour");
  double value = 0;
  if (!price.defined()) {
    m.missing("price_per_gpu_hour");  // only when `cost` itself is given
  } else if (decode_usd(price, "USD", "2.50USD", value)) {
    out.price_per_gpu_hour_usd = value;
  }
  m.finish();
}

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
  MapReader c(r.child("compute"));
  decode_compute(c, out.compute);
  const Node runtime_memory = r.child("runtime_memory");
  if (runtime_memory.defined()) {
    MapReader m(runtime_memory);
    decode_runtime_memory(m, out.runtime_memory.emplace());
  }
  if (const Node power = r.child("power"); power.defined()) {
    MapReader m(power);
    decode_power(m, out.power.emplace());
  }
  decode_samples(r, out);
  MapReader cost(r.child("cost"));
  decode_cost(cost, out.cost);
  if (const Node stack = r.child("stack"); stack.defined()) decode_stack(root, stack, out);
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
