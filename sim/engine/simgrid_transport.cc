#include "sim/engine/simgrid_transport.h"

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

void SimGridTransport::collective(workload::CollectiveKind kind, const std::vector<int64_t>& members,
                                  double bytes) {
  if (members.size() <= 1) return;
  auto plan = plans_.find(std::forward_as_tuple(kind, bytes, members));  // no copy of the members
  if (plan == plans_.end()) {
    const std::vector<int> gpus(members.begin(), members.end());
    plan = plans_
               .emplace(PlanKey{kind, bytes, members},
                        cost::plan_collective(workload::profile_kind(kind), gpus, bytes, model_))
               .first;
  }
  const cost::CollectiveSchedule& schedule = plan->second;
  for (const cost::Phase& phase : schedule.phases) flows_ += phase.flows.size();
  runner_->run(schedule, next_tag_++);
}

void SimGridTransport::send(int64_t src, int64_t dst, double bytes) {
  if (src == dst) return;
  const cost::CollectiveSchedule schedule =
      cost::plan_point_to_point(static_cast<int>(src), static_cast<int>(dst), bytes, model_);
  flows_ += 1;
  runner_->run(schedule, next_tag_++);
}

void SimGridTransport::copy(int64_t rank, workload::CopyDirection direction, double bytes) {
  sg4::this_actor::sleep_for(hardware_.host_link.latency_s);
  const config::CopyDirection d = direction == workload::CopyDirection::kHostToDevice
                                      ? config::CopyDirection::kHostToDevice
                                      : config::CopyDirection::kDeviceToHost;
  runner_->host_copy(static_cast<int>(rank), d, bytes);
  flows_ += 1;
}

}  // namespace trainsim::engine
