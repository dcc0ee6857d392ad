// Decoding of a scenario's `stragglers` section.
#include <map>

#include <fmt/format.h>

#include "sim/config/decode.h"

namespace trainsim::config::internal {
namespace {

// The largest spread accepted: truncated at 3 standard deviations, speeds stay above 0.4.
constexpr double kMaxSpreadStddev = 0.2;

// What entries are checked against: the GPUs (to expand nodes into ranks) and the NICs; all 0 when the
// cluster did not load (no checks).
struct ClusterShape {
  int64_t gpus = 0;
  int64_t gpus_per_node = 0;
  const Nics* nics = nullptr;
  std::string topology;

  explicit ClusterShape(const Cluster* cluster) {
    if (cluster == nullptr || cluster->topology.node.gpus <= 0) return;
    gpus = cluster->gpus;
    gpus_per_node = cluster->topology.node.gpus;
    nics = &cluster->topology.node.nics;
    topology = cluster->topology.name;
  }
};

// Which entry named each rank (or node) first, to refuse a second naming.
using Namings = std::map<int64_t, std::string>;

// Decodes the list at `key` of `entry` into `out`: non-negative integers, each a `what` ("rank",
// "node") of the cluster (the plan rule stragglers-in-cluster holds them to the cluster's size, which a
// search or sweep may change).
void decode_indices(MapReader& entry, std::string_view key, std::string_view what,
                    std::vector<int64_t>& out) {
  const Node list = entry.child(key);
  if (!list.defined()) return;
  if (!list.is_sequence()) {
    list.error(fmt::format("expected a list of {} numbers, e.g. [0, 5]", what));
    return;
  }
  for (const Node& element : list.elements()) {
    int64_t index = 0;
    if (decode(element, index, kNonNegative)) out.push_back(index);
  }
}

// Records that the entry at `where` names `ids` (ranks or nodes, `what`); an error saying `fix` for
// the first one an earlier entry named.
void claim(const std::vector<int64_t>& ids, std::string_view what, const Node& where, std::string_view fix,
           Namings& named) {
  for (const int64_t id : ids) {
    const auto [it, fresh] = named.emplace(id, where.path());
    if (!fresh) {
      where.error(fmt::format("{} {} is already slowed by {}; {}", what, id, it->second, fix));
      return;
    }
  }
}

// Calls `decode_entry(entry map, element)` for each element of the list `list`, which `example`
// shows; records an error when it is not a list.
template <class F>
void for_each_entry(const Node& list, std::string_view example, const F& decode_entry) {
  if (!list.is_sequence()) {
    list.error(fmt::format("expected a list of entries like {}", example));
    return;
  }
  for (const Node& element : list.elements()) {
    Diagnostics& diag = *element.diagnostics();
    const size_t errors_before = diag.count();
    MapReader m(element);
    decode_entry(m, element, [&] { return diag.count() == errors_before; });
  }
}

void decode_slow_gpus(const Node& list, const ClusterShape& shape, std::vector<SlowGpus>& out) {
  Namings named;
  for_each_entry(list, "{ranks: [5], speed: 0.8}", [&](MapReader& m, const Node& element, const auto& clean) {
    SlowGpus entry;
    decode_indices(m, "ranks", "rank", entry.ranks);
    decode_indices(m, "nodes", "node", entry.nodes);
    if (m.require("speed", entry.speed) && !(entry.speed > 0 && entry.speed <= 1)) {
      m.child("speed").error(
          fmt::format("must be above 0 and at most 1, got {}: the fraction of the profile's kernel rates the "
                      "GPU reaches (0.8: its kernels take 1.25 times as long)",
                      m.child("speed").scalar()));
    }
    m.finish();
    if (entry.ranks.empty() && entry.nodes.empty()) {
      if (clean()) element.error("names no GPU: give a list of ranks, of nodes, or both");
      return;
    }
    std::vector<int64_t> ranks = entry.ranks;
    for (const int64_t node : entry.nodes) {
      for (int64_t r = node * shape.gpus_per_node; r < std::min(shape.gpus, (node + 1) * shape.gpus_per_node);
           ++r) {
        ranks.push_back(r);
      }
    }
    claim(ranks, "rank", element, "give each GPU one speed", named);
    out.push_back(std::move(entry));
  });
}

void decode_slow_nics(const Node& list, const ClusterShape& shape, std::vector<SlowNics>& out) {
  Namings named;
  for_each_entry(
      list, "{nodes: [3], bandwidth: 100Gbps}", [&](MapReader& m, const Node& element, const auto& clean) {
        SlowNics entry;
        decode_indices(m, "nodes", "node", entry.nodes);
        if (entry.nodes.empty() && clean()) element.error("names no node: give a list of nodes");
        const Node bandwidth = m.child("bandwidth");
        if (!bandwidth.defined()) {
          m.missing("bandwidth");
        } else if (decode(bandwidth, entry.bandwidth_bytes_per_s, QuantityKind::kBandwidth, kPositiveReal) &&
                   shape.nics != nullptr) {
          if (shape.nics->count == 0) {
            bandwidth.error(
                fmt::format("topology {} has no NICs (a single node): remove slow_nics", shape.topology));
          } else if (entry.bandwidth_bytes_per_s >= shape.nics->link.bandwidth_bytes_per_s) {
            bandwidth.error(
                fmt::format("a slow NIC must be below the topology's {} per NIC, got {}",
                            format_quantity(shape.nics->link.bandwidth_bytes_per_s, QuantityKind::kBandwidth),
                            bandwidth.scalar()));
          }
        }
        m.finish();
        claim(entry.nodes, "node", element, "give each node one NIC bandwidth", named);
        out.push_back(std::move(entry));
      });
}

}  // namespace

void decode_stragglers(MapReader& m, Stragglers& out, const Cluster* cluster) {
  const ClusterShape shape(cluster);
  if (const Node slow = m.child("slow_gpus"); slow.defined()) decode_slow_gpus(slow, shape, out.slow_gpus);
  if (const Node nics = m.child("slow_nics"); nics.defined()) decode_slow_nics(nics, shape, out.slow_nics);
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
