#include "sim/cost/collective_model.h"

#include <array>
#include <cmath>

#include "sim/platform/analysis.h"
#include "sim/platform/invariant.h"
#include "sim/platform/topology_graph.h"

namespace trainsim::cost {
namespace {

constexpr std::array<std::pair<Algorithm, std::string_view>, 7> kAlgorithmNames = {{
    {Algorithm::kAuto, "auto"},
    {Algorithm::kRing, "ring"},
    {Algorithm::kTree, "tree"},
    {Algorithm::kHierarchical, "hierarchical"},
    {Algorithm::kNvls, "nvls"},
    {Algorithm::kPairwise, "pairwise"},
    {Algorithm::kDirect, "direct"},
}};

template <class E, size_t N>
std::string_view name_of(const std::array<std::pair<E, std::string_view>, N>& names, E value) {
  for (const auto& [e, name] : names) {
    if (e == value) return name;
  }
  return "?";
}

template <class E, size_t N>
std::optional<E> parse(const std::array<std::pair<E, std::string_view>, N>& names, std::string_view text) {
  for (const auto& [e, name] : names) {
    if (name == text) return e;
  }
  return std::nullopt;
}

template <class E, size_t N>
std::vector<std::string_view> all_names(const std::array<std::pair<E, std::string_view>, N>& names) {
  std::vector<std::string_view> out;
  for (const auto& entry : names) out.push_back(entry.second);
  return out;
}

}  // namespace

std::string_view to_string(Algorithm algorithm) { return name_of(kAlgorithmNames, algorithm); }
std::optional<Algorithm> parse_algorithm(std::string_view text) { return parse(kAlgorithmNames, text); }
std::vector<std::string_view> algorithm_names() { return all_names(kAlgorithmNames); }

TopologyView view_of(const platform::TopologyGraph& graph) {
  TopologyView view;
  view.gpu_count = graph.gpu_count();
  view.gpus_per_node = graph.gpus_per_node();
  view.nvls = graph.topology().node.intra.nvls;
  view.intra_switched = graph.topology().node.intra.kind == config::IntraNodeKind::kNvSwitch;
  view.intra_bandwidth_bytes_per_s = platform::intra_node_injection_bytes_per_s(graph);
  view.inter_bandwidth_bytes_per_s = platform::inter_node_injection_bytes_per_s(graph);
  view.path_latency_s = [&graph](int src, int dst) { return graph.path_latency_s(src, dst); };
  return view;
}

double AlgorithmTuning::efficiency_at(double bytes) const {
  if (efficiency.empty()) return 1.0;
  for (size_t i = 0; i < efficiency.size(); ++i) {
    TRAINSIM_PLATFORM_CHECK(efficiency[i].bytes > 0 && efficiency[i].efficiency > 0 &&
                                (i == 0 || efficiency[i].bytes > efficiency[i - 1].bytes),
                            "efficiency point {} ({} bytes, {}) is not positive or not sorted", i,
                            efficiency[i].bytes, efficiency[i].efficiency);
  }
  if (bytes <= efficiency.front().bytes) return efficiency.front().efficiency;
  if (bytes >= efficiency.back().bytes) return efficiency.back().efficiency;
  size_t hi = 1;
  while (efficiency[hi].bytes < bytes) ++hi;
  const EfficiencyPoint& a = efficiency[hi - 1];
  const EfficiencyPoint& b = efficiency[hi];
  const double t = (std::log(bytes) - std::log(a.bytes)) / (std::log(b.bytes) - std::log(a.bytes));
  return a.efficiency + t * (b.efficiency - a.efficiency);
}

const AlgorithmTuning& CollectiveTuning::of(CollectiveKind kind, Algorithm algorithm, Tier tier) const {
  static const AlgorithmTuning kIdeal;
  const auto it = entries.find({kind, algorithm, tier});
  return it == entries.end() ? kIdeal : it->second;
}

}  // namespace trainsim::cost
