// Decoding of a scenario's `stragglers` section.
#include <map>

#include <fmt/format.h>

#include "sim/config/decode.h"

namespace trainsim::config::internal {
namespace {

// The largest spread accepted: truncated at 3 standard deviations, speeds stay above 0.4.
constexpr double kMaxSpreadStddev = 0.2;

// Which slow_gpus entry named each rank first, to refuse a second naming.
using Namings = std::map<int64_t, std::string>;

// Decodes the list at `key` of `entry` into `out`: integers in [0, count), each a `what` ("rank",
// "node") of the cluster; `count` 0 when the cluster did not load (no range check then).
void decode_indices(MapReader& entry, std::string_view key, std::string_view what, int64_t count,
                    std::string_view count_source, std::vector<int64_t>& out) {
  const Node list = entry.child(key);
  if (!list.defined()) return;
  if (!list.is_sequence()) {
    list.error(fmt::format("expected a list of {} numbers, e.g. [0, 5]", what));
    return;
  }
  for (const Node& element : list.elements()) {
    int64_t index = 0;
    if (!decode(element, index, kNonNegative)) continue;
    if (count > 0 && index >= count) {
      element.error(fmt::format("{} {} is not in this cluster ({}: {}s 0 to {})", what, index, count_source,
                                what, count - 1));
      continue;
    }
    out.push_back(index);
  }
}

// Records that `entry` slows `ranks`; an error at `where` for a rank an earlier entry named.
void claim(const std::vector<int64_t>& ranks, const Node& where, Namings& named) {
  for (const int64_t rank : ranks) {
    const auto [it, fresh] = named.emplace(rank, where.path());
    if (!fresh) {
      where.error(fmt::format("rank {} is already slowed by {}; give each GPU one speed", rank, it->second));
      return;
    }
  }
}

void decode_slow_gpus(const Node& list, const Cluster* cluster, std::vector<SlowGpus>& out) {
  if (!list.is_sequence()) {
    list.error("expected a list of entries like {ranks: [5], speed: 0.8}");
    return;
  }
  const int64_t gpus = cluster ? cluster->gpus : 0;
  const int64_t per_node = cluster ? cluster->topology.node.gpus : 0;
  const int64_t nodes = per_node > 0 ? (gpus + per_node - 1) / per_node : 0;
  Namings named;
  for (const Node& element : list.elements()) {
    Diagnostics& diag = *element.diagnostics();
    const size_t errors_before = diag.count();
    MapReader m(element);
    SlowGpus entry;
    decode_indices(m, "ranks", "rank", gpus, fmt::format("cluster.gpus {}", gpus), entry.ranks);
    decode_indices(m, "nodes", "node", nodes, fmt::format("{} GPUs of {} per node", gpus, per_node),
                   entry.nodes);
    if (m.require("speed", entry.speed) && !(entry.speed > 0 && entry.speed <= 1)) {
      m.child("speed").error(
          fmt::format("must be above 0 and at most 1, got {}: the fraction of the profile's kernel rates the "
                      "GPU reaches (0.8: its kernels take 1.25 times as long)",
                      m.child("speed").scalar()));
    }
    m.finish();
    if (entry.ranks.empty() && entry.nodes.empty()) {
      if (diag.count() == errors_before)
        element.error("names no GPU: give a list of ranks, of nodes, or both");
      continue;
    }
    std::vector<int64_t> ranks = entry.ranks;
    for (const int64_t node : entry.nodes) {
      for (int64_t r = node * per_node; r < std::min(gpus, (node + 1) * per_node); ++r) ranks.push_back(r);
    }
    claim(ranks, element, named);
    out.push_back(std::move(entry));
  }
}

}  // namespace

void decode_stragglers(MapReader& m, Stragglers& out, const Cluster* cluster) {
  const Node slow = m.child("slow_gpus");
  if (slow.defined()) decode_slow_gpus(slow, cluster, out.slow_gpus);
  const Node spread = m.child("speed_spread");
  if (spread.defined()) {
    MapReader s(spread);
    if (s.require("stddev", out.spread_stddev) &&
        !(out.spread_stddev >= 0 && out.spread_stddev <= kMaxSpreadStddev)) {
      s.child("stddev").error(fmt::format(
          "must be from 0 to {}, got {}: the standard deviation of the GPUs' speeds around 1 (0.02: two "
          "thirds of the GPUs within 2 % of the profile's rates)",
          kMaxSpreadStddev, s.child("stddev").scalar()));
    }
    int64_t seed = static_cast<int64_t>(out.seed);
    if (s.read("seed", seed, kNonNegative)) out.seed = static_cast<uint64_t>(seed);
    s.finish();
  }
  m.finish();
}

}  // namespace trainsim::config::internal
