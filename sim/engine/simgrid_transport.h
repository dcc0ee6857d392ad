// The network as SimGrid simulates it: the topology's graph built into a platform (sim/platform),
// collectives planned as algorithms and played as concurrent flows that share links by max-min
// fairness (sim/cost), host copies over the node's PCIe links. Congestion, NIC and PCIe sharing and
// collective/copy contention all come from here.
#ifndef TRAINSIM_SIM_ENGINE_SIMGRID_TRANSPORT_H_
#define TRAINSIM_SIM_ENGINE_SIMGRID_TRANSPORT_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <tuple>
#include <vector>

#include "sim/config/hardware.h"
#include "sim/config/topology.h"
#include "sim/cost/collective.h"
#include "sim/cost/flow_runner.h"
#include "sim/cost/link_load.h"
#include "sim/engine/transport.h"
#include "sim/platform/simgrid_platform.h"
#include "sim/platform/topology_graph.h"

namespace trainsim::engine {

class SimGridTransport : public Transport {
 public:
  // Keeps references to `topology` and `hardware`, which must outlive the transport. The NICs of the
  // nodes in `nic_bandwidth_by_node` run at that bandwidth instead of the topology's.
  SimGridTransport(const config::Topology& topology, const config::HardwareProfile& hardware,
                   std::map<int64_t, double> nic_bandwidth_by_node = {});
  ~SimGridTransport() override;

  void build_platform() override;
  simgrid::s4u::Host* host_of(int64_t rank) override;
  void collective(workload::CollectiveKind kind, const std::vector<int64_t>& members, double bytes) override;
  void send(int64_t src, int64_t dst, double bytes) override;
  void copy(int64_t rank, workload::CopyDirection direction, double bytes) override;
  // Candidates are coupled through the directed links their flows' routes cross (a collective's as
  // planned for it, which the transport keeps for when it plays).
  std::vector<bool> coupled(const std::vector<Traffic>& anchors,
                            const std::vector<Traffic>& candidates) override;
  void sends(const std::vector<std::pair<int64_t, int64_t>>& pairs, double bytes) override;
  void copies(const std::vector<int64_t>& gpus, workload::CopyDirection direction, double bytes) override;

  // Records the load of every link (cost/link_load.h), each flow charged to the group of its source
  // GPU in `group_of_gpu` (as LinkLoad takes it). Call before build_platform.
  void record_link_load(std::vector<int> group_of_gpu);
  // What was recorded; nullptr without record_link_load. Valid while the transport lives.
  const cost::LinkLoad* link_load() const { return link_load_.get(); }

 private:
  // Gives the NIC links of nic_bandwidth_by_node_'s nodes their bandwidth (both directions).
  void slow_down_nics();
  // The plan of a collective, planned on first use.
  const cost::CollectiveSchedule& schedule_of(workload::CollectiveKind kind,
                                              const std::vector<int64_t>& members, double bytes);
  // The directed links (2 x link + forward) that `traffic`'s flows cross, with repeats.
  std::vector<int> links_of(const Traffic& traffic);

  const config::Topology& topology_;
  const config::HardwareProfile& hardware_;
  std::map<int64_t, double> nic_bandwidth_by_node_;
  std::unique_ptr<platform::TopologyGraph> graph_;
  std::unique_ptr<platform::Platform> platform_;
  std::unique_ptr<cost::FlowRunner> runner_;
  std::optional<std::vector<int>> link_load_groups_;  // set by record_link_load
  std::unique_ptr<cost::LinkLoad> link_load_;
  cost::CollectiveModel model_;
  // Planned collectives by (kind, bytes, members): a rank's graph repeats each of its collectives in
  // every layer and micro-batch, and planning one (choosing the algorithm, merging its flows) costs
  // more than playing it. Entries stay (and so stay where they are) while collectives play them.
  using PlanKey = std::tuple<workload::CollectiveKind, double, std::vector<int64_t>>;
  std::map<PlanKey, cost::CollectiveSchedule, std::less<>> plans_;
  int next_tag_ = 0;
};

}  // namespace trainsim::engine

#endif  // TRAINSIM_SIM_ENGINE_SIMGRID_TRANSPORT_H_
