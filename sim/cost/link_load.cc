#include "sim/cost/link_load.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "sim/platform/simgrid_platform.h"

namespace trainsim::cost {

namespace {

using platform::GraphStore;
using platform::LinkKind;
using platform::VertexId;
using platform::VertexKind;

constexpr size_t kFirstMerge = 64;

size_t direction(int link, bool forward) { return 2 * static_cast<size_t>(link) + (forward ? 0 : 1); }

// The level of every fabric switch: 1 for those NICs attach to (leaves, dragonfly routers, torus
// routers), one more per fabric link above; 0 for other vertices.
std::vector<int> switch_levels(const GraphStore& store) {
  std::vector<int> level(store.vertex_count(), 0);
  std::vector<VertexId> frontier;
  for (int l = 0; l < static_cast<int>(store.link_count()); ++l) {
    if (store.link(l).kind != LinkKind::kNic) continue;
    for (const VertexId v : {store.first(l), store.second(l)}) {
      if (store.vertex(v).kind == VertexKind::kSwitch && level[v] == 0) {
        level[v] = 1;
        frontier.push_back(v);
      }
    }
  }
  std::vector<std::vector<VertexId>> up(store.vertex_count());
  for (int l = 0; l < static_cast<int>(store.link_count()); ++l) {
    if (store.link(l).kind != LinkKind::kFabric) continue;
    up[store.first(l)].push_back(store.second(l));
    up[store.second(l)].push_back(store.first(l));
  }
  while (!frontier.empty()) {
    std::vector<VertexId> next;
    for (const VertexId v : frontier) {
      for (const VertexId w : up[v]) {
        if (level[w] != 0) continue;
        level[w] = level[v] + 1;
        next.push_back(w);
      }
    }
    frontier = std::move(next);
  }
  return level;
}

std::string endpoint_class(const GraphStore& store, VertexId v, const std::vector<int>& levels) {
  switch (store.vertex(v).kind) {
    case VertexKind::kGpu:
      return "gpu";
    case VertexKind::kNvSwitch:
      return "nvswitch";
    case VertexKind::kPcieSwitch:
      return "pcie-switch";
    case VertexKind::kCpu:
      return "cpu";
    case VertexKind::kHost:
      return "host";
    case VertexKind::kNic:
      return "nic";
    case VertexKind::kSwitch:
      return levels[v] > 0 ? fmt::format("l{}", levels[v]) : "switch";
  }
  return "?";
}

}  // namespace

LinkLoad::LinkLoad(const platform::Platform& platform, std::vector<int> group_of_gpu)
    : graph_(platform.graph()), group_of_gpu_(std::move(group_of_gpu)) {
  for (const int g : group_of_gpu_) groups_ = std::max(groups_, g + 1);
  const size_t directions = 2 * graph_.store().link_count();
  bandwidth_.resize(directions);
  for (size_t d = 0; d < directions; ++d) {
    bandwidth_[d] = platform.link(static_cast<int>(d / 2), d % 2 == 0)->get_bandwidth();
  }
  bytes_.assign(directions, 0);
  if (groups_ > 1) group_bytes_.assign(directions * static_cast<size_t>(groups_), 0);
  busy_.resize(directions);
  merge_at_.assign(directions, kFirstMerge);
}

void LinkLoad::add_flow(int src_gpu, int dst_gpu, double bytes, double start_s, double end_s) {
  add(graph_.gpu_vertex(src_gpu), graph_.gpu_vertex(dst_gpu), src_gpu, bytes, start_s, end_s);
}

void LinkLoad::add_host_copy(int gpu, bool to_host, double bytes, double start_s, double end_s) {
  const VertexId device = graph_.gpu_vertex(gpu);
  const VertexId host = graph_.host_vertex(graph_.node_of_gpu(gpu));
  add(to_host ? device : host, to_host ? host : device, gpu, bytes, start_s, end_s);
}

void LinkLoad::add(VertexId src, VertexId dst, int gpu, double bytes, double start_s, double end_s) {
  if (bytes <= 0) return;
  const size_t group = static_cast<size_t>(gpu) < group_of_gpu_.size()
                           ? static_cast<size_t>(group_of_gpu_[static_cast<size_t>(gpu)])
                           : 0;
  hops_.clear();
  graph_.append_route(src, dst, hops_);
  for (const platform::Hop& hop : hops_) {
    const size_t d = direction(hop.link, hop.forward);
    bytes_[d] += bytes;
    if (groups_ > 1) group_bytes_[d * static_cast<size_t>(groups_) + group] += bytes;
    busy_[d].emplace_back(start_s, end_s);
    if (busy_[d].size() >= merge_at_[d]) {
      merge_intervals(d);
      merge_at_[d] = std::max(kFirstMerge, 2 * busy_[d].size());
    }
  }
}

void LinkLoad::merge_intervals(size_t d) const {
  std::vector<Interval>& intervals = busy_[d];
  std::sort(intervals.begin(), intervals.end());
  size_t kept = 0;
  for (const Interval& i : intervals) {
    if (kept > 0 && i.first <= intervals[kept - 1].second) {
      intervals[kept - 1].second = std::max(intervals[kept - 1].second, i.second);
    } else {
      intervals[kept++] = i;
    }
  }
  intervals.resize(kept);
}

LinkLoadSummary LinkLoad::summarize(double window_s, size_t top) const {
  const GraphStore& store = graph_.store();
  const std::vector<int> levels = switch_levels(store);
  const auto tier_of = [&](int link, bool forward) {
    const platform::Hop hop{link, forward};
    return fmt::format("{}: {} -> {}", platform::to_string(store.link(link).kind),
                       endpoint_class(store, store.from(hop), levels),
                       endpoint_class(store, store.to(hop), levels));
  };
  const auto name_of = [&](const platform::Hop& hop) {
    const int cable = store.link(hop.link).cable;
    return fmt::format("{} -> {}{}", store.vertex(store.from(hop)).name, store.vertex(store.to(hop)).name,
                       cable >= 0 ? fmt::format(" cable {}", cable) : "");
  };
  const auto utilization = [&](size_t d, double seconds) {
    return seconds > 0 && bandwidth_[d] > 0 ? bytes_[d] / (bandwidth_[d] * seconds) : 0.0;
  };

  LinkLoadSummary out;
  out.window_s = window_s;
  out.directions = static_cast<int>(bytes_.size());
  std::map<std::string, size_t> tier_index;
  std::vector<std::pair<double, size_t>> loaded;  // (-utilization, direction)
  for (size_t d = 0; d < bytes_.size(); ++d) {
    const int link = static_cast<int>(d / 2);
    const bool forward = d % 2 == 0;
    const std::string tier = tier_of(link, forward);
    const auto [it, added] = tier_index.emplace(tier, out.tiers.size());
    if (added) out.tiers.emplace_back().tier = tier;
    LinkTierLoad& t = out.tiers[it->second];
    ++t.directions;
    if (bytes_[d] <= 0) continue;
    const double u = utilization(d, window_s);
    ++t.loaded;
    t.bytes += bytes_[d];
    t.mean_utilization += u;
    if (u > t.max_utilization || t.busiest.empty()) {
      t.max_utilization = u;
      t.busiest = name_of({link, forward});
    }
    loaded.emplace_back(-u, d);
  }
  for (LinkTierLoad& t : out.tiers) t.mean_utilization /= std::max(t.loaded, 1);
  out.loaded = static_cast<int>(loaded.size());

  const size_t shown = std::min(top, loaded.size());
  std::partial_sort(loaded.begin(), loaded.begin() + static_cast<std::ptrdiff_t>(shown), loaded.end());
  for (size_t k = 0; k < shown; ++k) {
    const size_t d = loaded[k].second;
    const int link = static_cast<int>(d / 2);
    const platform::Hop hop{link, d % 2 == 0};
    merge_intervals(d);
    double busy_s = 0;
    for (const Interval& i : busy_[d]) busy_s += std::min(i.second, window_s) - std::min(i.first, window_s);
    LinkDirectionLoad l;
    l.name = name_of(hop);
    l.tier = tier_of(link, hop.forward);
    l.bandwidth_bytes_per_s = bandwidth_[d];
    l.bytes = bytes_[d];
    l.busy_s = busy_s;
    l.utilization = utilization(d, window_s);
    l.utilization_when_busy = utilization(d, busy_s);
    if (groups_ > 1) {
      const auto first = group_bytes_.begin() + static_cast<std::ptrdiff_t>(d * static_cast<size_t>(groups_));
      l.bytes_by_group.assign(first, first + groups_);
    } else {
      l.bytes_by_group = {bytes_[d]};
    }
    out.busiest.push_back(std::move(l));
  }
  return out;
}

}  // namespace trainsim::cost
