// How much each link direction of the platform carried and for how long it was busy, recorded from
// the flows FlowRunner plays: which links a plan (or several jobs sharing a cluster) loads, and which
// is the bottleneck. Summarised by tier (NVLink into the switch, NIC to leaf, leaf to spine, ...) and
// as the busiest directions.
//
// Busy time is the union of the intervals during which at least one flow crossed the direction; the
// utilization while busy, bytes / (bandwidth x busy time), is 1 for a direction that ran at its full
// bandwidth whenever it carried anything (a bottleneck) and lower for one that always waited for
// another link. Bytes are what occupied the wire: a collective's flows carry its payload divided by
// the calibrated bandwidth efficiency (cost/collective_model.h), protocol overhead included.
#ifndef TRAINSIM_SIM_COST_LINK_LOAD_H_
#define TRAINSIM_SIM_COST_LINK_LOAD_H_

#include <string>
#include <utility>
#include <vector>

#include "sim/platform/topology_graph.h"

namespace trainsim::platform {
class Platform;  // sim/platform/simgrid_platform.h
}  // namespace trainsim::platform

namespace trainsim::cost {

// One tier of links: every direction of one link kind between two kinds of endpoint.
struct LinkTierLoad {
  std::string tier;    // "<link kind>: <from> -> <to>", e.g. "nvlink: gpu -> nvswitch", "fabric: l1 -> l2"
  int directions = 0;  // link directions of the tier
  int loaded = 0;      // those that carried traffic
  double bytes = 0;    // all of them together
  double mean_utilization = 0;  // over its loaded directions (a job uses part of a large cluster)
  double max_utilization = 0;
  std::string busiest;  // the direction with max_utilization ("" when none is loaded)
};

// One loaded link direction.
struct LinkDirectionLoad {
  std::string name;  // "<from vertex> -> <to vertex>", e.g. "node0/nic0 -> fabric/l1/sw0"
  std::string tier;
  double bandwidth_bytes_per_s = 0;  // as simulated (a slow NIC's reduced bandwidth)
  double bytes = 0;
  double busy_s = 0;
  double utilization = 0;              // bytes / (bandwidth x window)
  double utilization_when_busy = 0;    // bytes / (bandwidth x busy_s)
  std::vector<double> bytes_by_group;  // per group of LinkLoad (one entry with a single group)
};

struct LinkLoadSummary {
  double window_s = 0;  // the simulated time the utilizations are over
  int directions = 0;   // every link direction of the platform
  int loaded = 0;
  std::vector<LinkTierLoad> tiers;         // in order of first appearance among the platform's links
  std::vector<LinkDirectionLoad> busiest;  // by utilization, highest first (ties: lower link index)
};

class LinkLoad {
 public:
  // Records traffic on `platform`'s links, reading their bandwidths now (after any change such as a
  // slow NIC). Flows are charged to the group of their source GPU: `group_of_gpu[gpu]` (a job of
  // several sharing the cluster); GPUs beyond it, and all of them when it is empty, are group 0.
  // Keeps a reference to the platform's graph, which must outlive the LinkLoad.
  explicit LinkLoad(const platform::Platform& platform, std::vector<int> group_of_gpu = {});

  // A flow of `bytes` from GPU `src_gpu` to GPU `dst_gpu` that ran from start_s to end_s.
  void add_flow(int src_gpu, int dst_gpu, double bytes, double start_s, double end_s);
  // A copy of `bytes` between GPU `gpu` and its node's host memory (`to_host`: device to host).
  void add_host_copy(int gpu, bool to_host, double bytes, double start_s, double end_s);

  int groups() const { return groups_; }

  // The load over [0, window_s], with the `top` busiest directions.
  LinkLoadSummary summarize(double window_s, size_t top) const;

 private:
  using Interval = std::pair<double, double>;
  void add(platform::VertexId src, platform::VertexId dst, int gpu, double bytes, double start_s,
           double end_s);
  // Sorts and merges the busy intervals of direction `d` (adjacent or overlapping ones become one).
  void merge_intervals(size_t d) const;

  const platform::TopologyGraph& graph_;
  std::vector<int> group_of_gpu_;
  int groups_ = 1;
  std::vector<double> bandwidth_;  // per direction: 2 * link + (forward ? 0 : 1)
  std::vector<double> bytes_;
  std::vector<double> group_bytes_;  // per direction and group, when groups_ > 1
  // Busy intervals per direction, merged whenever their count reaches merge_at_ (mutable: merging
  // changes the representation, not the value).
  mutable std::vector<std::vector<Interval>> busy_;
  mutable std::vector<size_t> merge_at_;
  std::vector<platform::Hop> hops_;  // scratch for routes
};

}  // namespace trainsim::cost

#endif  // TRAINSIM_SIM_COST_LINK_LOAD_H_
