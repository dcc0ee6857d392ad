#include "sim/engine/simgrid_transport.h"

#include <algorithm>
#include <map>
#include <numeric>

#include <simgrid/s4u.hpp>

#include "sim/cost/collective_calibration.h"

namespace trainsim::engine {
namespace sg4 = simgrid::s4u;

SimGridTransport::SimGridTransport(const config::Topology& topology, const config::HardwareProfile& hardware,
                                   std::map<int64_t, double> nic_bandwidth_by_node)
    : topology_(topology), hardware_(hardware), nic_bandwidth_by_node_(std::move(nic_bandwidth_by_node)) {}

SimGridTransport::~SimGridTransport() = default;

void SimGridTransport::build_platform() {
  graph_ = std::make_unique<platform::TopologyGraph>(topology_);
  platform_ = std::make_unique<platform::Platform>(*sg4::Engine::get_instance(), *graph_);
  slow_down_nics();
  runner_ = std::make_unique<cost::FlowRunner>(*platform_);
  if (link_load_groups_) {
    link_load_ = std::make_unique<cost::LinkLoad>(*platform_, std::move(*link_load_groups_));
    runner_->record_into(link_load_.get());
  }
  model_.topology = cost::view_of(*graph_);
  model_.tuning = cost::tuning_from_fits(hardware_, model_.topology).tuning;
}

void SimGridTransport::record_link_load(std::vector<int> group_of_gpu) {
  link_load_groups_ = std::move(group_of_gpu);
}

void SimGridTransport::slow_down_nics() {
  if (nic_bandwidth_by_node_.empty()) return;
  const platform::GraphStore& store = graph_->store();
  for (int l = 0; l < static_cast<int>(store.link_count()); ++l) {
    if (store.link(l).kind != platform::LinkKind::kNic) continue;
    for (const platform::VertexId end : {store.first(l), store.second(l)}) {
      const platform::Vertex& v = store.vertex(end);
      const auto slow = nic_bandwidth_by_node_.find(v.node);
      if (v.kind != platform::VertexKind::kNic || slow == nic_bandwidth_by_node_.end()) continue;
      platform_->link(l, true)->set_bandwidth(slow->second);
      platform_->link(l, false)->set_bandwidth(slow->second);
    }
  }
}

sg4::Host* SimGridTransport::host_of(int64_t rank) { return platform_->gpu_host(static_cast<int>(rank)); }

const cost::CollectiveSchedule& SimGridTransport::schedule_of(workload::CollectiveKind kind,
                                                              const std::vector<int64_t>& members,
                                                              double bytes) {
  auto plan = plans_.find(std::forward_as_tuple(kind, bytes, members));  // no copy of the members
  if (plan == plans_.end()) {
    const std::vector<int> gpus(members.begin(), members.end());
    plan = plans_
               .emplace(PlanKey{kind, bytes, members},
                        cost::plan_collective(workload::profile_kind(kind), gpus, bytes, model_))
               .first;
  }
  return plan->second;
}

void SimGridTransport::collective(workload::CollectiveKind kind, const std::vector<int64_t>& members,
                                  double bytes) {
  if (members.size() <= 1) return;
  const cost::CollectiveSchedule& schedule = schedule_of(kind, members, bytes);
  runner_->run(schedule, next_tag_++);
}

void SimGridTransport::send(int64_t src, int64_t dst, double bytes) {
  if (src == dst) return;
  const cost::CollectiveSchedule schedule =
      cost::plan_point_to_point(static_cast<int>(src), static_cast<int>(dst), bytes, model_);
  runner_->run(schedule, next_tag_++);
}

void SimGridTransport::copy(int64_t rank, workload::CopyDirection direction, double bytes) {
  copies({rank}, direction, bytes);
}

void SimGridTransport::sends(const std::vector<std::pair<int64_t, int64_t>>& pairs, double bytes) {
  // The transfers with the same latency start together: one phase each, played as one schedule (on
  // member side when it is large, which scales where thousands of lone transfers would not).
  std::map<double, cost::CollectiveSchedule> by_latency;
  for (const auto& [src, dst] : pairs) {
    if (src == dst) continue;
    cost::CollectiveSchedule one =
        cost::plan_point_to_point(static_cast<int>(src), static_cast<int>(dst), bytes, model_);
    auto [it, first] = by_latency.try_emplace(one.phases.front().latency_s, one);
    if (first) continue;
    cost::CollectiveSchedule& merged = it->second;
    merged.phases.front().flows.push_back(one.phases.front().flows.front());
    merged.members.insert(merged.members.end(), one.members.begin(), one.members.end());
  }
  for (auto& entry : by_latency) {
    std::vector<int>& members = entry.second.members;
    std::sort(members.begin(), members.end());
    members.erase(std::unique(members.begin(), members.end()), members.end());
  }
  if (by_latency.size() == 1) {
    runner_->run(by_latency.begin()->second, next_tag_++);
    return;
  }
  std::vector<sg4::ActorPtr> groups;
  for (const auto& entry : by_latency) {
    groups.push_back(sg4::Actor::create(
        "sends", sg4::this_actor::get_host(),
        [this, &schedule = entry.second, tag = next_tag_++] { runner_->run(schedule, tag); }));
  }
  for (const sg4::ActorPtr& group : groups) group->join();
}

void SimGridTransport::copies(const std::vector<int64_t>& gpus, workload::CopyDirection direction,
                              double bytes) {
  sg4::this_actor::sleep_for(hardware_.host_link.latency_s);
  const config::CopyDirection d = direction == workload::CopyDirection::kHostToDevice
                                      ? config::CopyDirection::kHostToDevice
                                      : config::CopyDirection::kDeviceToHost;
  runner_->host_copies(std::vector<int>(gpus.begin(), gpus.end()), d, bytes);
}

std::vector<int> SimGridTransport::links_of(const Traffic& traffic) {
  std::vector<std::pair<platform::VertexId, platform::VertexId>> ends;
  switch (traffic.kind) {
    case Traffic::Kind::kCollective:
      if (traffic.gpus.size() > 1) {
        for (const cost::Phase& phase : schedule_of(traffic.collective, traffic.gpus, traffic.bytes).phases) {
          for (const cost::Flow& f : phase.flows) {
            ends.emplace_back(graph_->gpu_vertex(f.src_gpu), graph_->gpu_vertex(f.dst_gpu));
          }
        }
      }
      break;
    case Traffic::Kind::kSend:
      ends.emplace_back(graph_->gpu_vertex(static_cast<int>(traffic.gpus[0])),
                        graph_->gpu_vertex(static_cast<int>(traffic.gpus[1])));
      break;
    case Traffic::Kind::kCopy: {
      const int gpu = static_cast<int>(traffic.gpus[0]);
      const platform::VertexId device = graph_->gpu_vertex(gpu);
      const platform::VertexId host = graph_->host_vertex(graph_->node_of_gpu(gpu));
      if (traffic.direction == workload::CopyDirection::kHostToDevice) {
        ends.emplace_back(host, device);
      } else {
        ends.emplace_back(device, host);
      }
      break;
    }
  }
  std::sort(ends.begin(), ends.end());
  ends.erase(std::unique(ends.begin(), ends.end()), ends.end());
  std::vector<int> links;
  std::vector<platform::Hop> hops;
  for (const auto& [src, dst] : ends) {
    hops.clear();
    graph_->append_route(src, dst, hops);
    for (const platform::Hop& hop : hops) links.push_back(2 * hop.link + (hop.forward ? 1 : 0));
  }
  return links;
}

std::vector<bool> SimGridTransport::coupled(const std::vector<Traffic>& anchors,
                                            const std::vector<Traffic>& candidates) {
  // Union-find over the directed links: each traffic joins the links it crosses.
  std::vector<int> parent(2 * graph_->store().link_count());
  std::iota(parent.begin(), parent.end(), 0);
  const auto root = [&parent](int x) {
    while (parent[static_cast<size_t>(x)] != x) {
      x = parent[static_cast<size_t>(x)] = parent[static_cast<size_t>(parent[static_cast<size_t>(x)])];
    }
    return x;
  };
  const auto join = [&](const std::vector<int>& links) {
    for (size_t i = 1; i < links.size(); ++i) parent[static_cast<size_t>(root(links[i]))] = root(links[0]);
  };
  std::vector<int> anchor_links;
  for (const Traffic& t : anchors) {
    const std::vector<int> links = links_of(t);
    join(links);
    anchor_links.insert(anchor_links.end(), links.begin(), links.end());
  }
  std::vector<int> first_link(candidates.size(), -1);
  for (size_t i = 0; i < candidates.size(); ++i) {
    const std::vector<int> links = links_of(candidates[i]);
    join(links);
    if (!links.empty()) first_link[i] = links[0];
  }
  std::vector<bool> anchored(parent.size(), false);
  for (const int link : anchor_links) anchored[static_cast<size_t>(root(link))] = true;
  std::vector<bool> out(candidates.size(), false);
  for (size_t i = 0; i < candidates.size(); ++i) {
    out[i] = first_link[i] >= 0 && anchored[static_cast<size_t>(root(first_link[i]))];
  }
  return out;
}

}  // namespace trainsim::engine
