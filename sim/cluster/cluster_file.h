// Cluster files: several training jobs on one cluster at once, each on nodes of its own, their
// traffic sharing the fabric. Decoded with sim/config's located readers, so every problem is
// reported as `file:line:col: error: key: message` like in the other inputs.
//
//   schema_version: 1
//   name: two-jobs-on-a-2to1-tree
//   topology: ../../topologies/dgx-h100-cluster.yaml   # the cluster: one topology,
//   hardware: ../../calibrate/profiles/h100-sxm5-80gb.yaml   # one GPU kind
//   placement: packed              # where jobs without `nodes` go: packed | interleaved | spread | random
//   seed: 1                        # of the random placement
//   jobs:
//     - scenario: ../06-llama3-70b-256xh100.yaml   # model, training and parallel plan
//       name: llama                # default: the scenario's name
//       gpus: 128                  # default: the scenario's cluster.gpus (or nodes x GPUs per node)
//       nodes: [0-7, 16-23]        # the cluster's nodes it holds, its ranks filling them in order
//       start: 50ms                # when it starts (default 0)
//       set: {parallelism.pp: 4}   # scenario keys, as with --set
//
// A job takes whole nodes: its ranks fill its nodes in the order they are listed, rank r on GPU
// r mod g of its node r / g (g GPUs per node), as on a cluster of its own. The job's scenario keeps
// its model, training, parallelism and stragglers' slow GPUs; its cluster is the cluster file's.
#ifndef TRAINSIM_SIM_CLUSTER_CLUSTER_FILE_H_
#define TRAINSIM_SIM_CLUSTER_CLUSTER_FILE_H_

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "sim/config/diagnostics.h"
#include "sim/config/hardware.h"
#include "sim/config/loader.h"
#include "sim/config/scenario.h"
#include "sim/config/settings.h"
#include "sim/config/topology.h"
#include "sim/config/types.h"

namespace trainsim::cluster {

// How the jobs that do not list their nodes get them, from the nodes no job lists.
enum class Placement {
  kPacked,       // each job the lowest free nodes, one block after the other (a scheduler on an idle cluster)
  kInterleaved,  // the free nodes dealt round-robin to the jobs (jobs mixed on the same switches)
  kSpread,       // each job's nodes evenly spaced over the free nodes (every job across the cluster)
  kRandom,       // a seeded random draw of the free nodes (a fragmented cluster)
};

}  // namespace trainsim::cluster

namespace trainsim::config {
template <>
struct EnumNames<cluster::Placement> {  // the spelling of `placement:`
  static constexpr auto kNames = std::to_array<std::pair<cluster::Placement, std::string_view>>(
      {{cluster::Placement::kPacked, "packed"},
       {cluster::Placement::kInterleaved, "interleaved"},
       {cluster::Placement::kSpread, "spread"},
       {cluster::Placement::kRandom, "random"}});
};
}  // namespace trainsim::config

namespace trainsim::cluster {

struct ClusterJob {
  std::string name;
  config::Scenario scenario;   // with the cluster's topology, hardware profile and the job's GPUs
  std::vector<int64_t> nodes;  // the cluster nodes it holds, in the order its ranks fill them
  double start_s = 0;
  std::vector<config::Setting> set;  // the entry's `set`, as written
};

struct ClusterFile {
  std::filesystem::path path;  // absolute, normalised
  std::string display_name;    // as messages show it
  std::string name;
  std::string description;
  std::string content_hash;  // of the cluster file's bytes
  config::Topology topology;
  config::HardwareProfile hardware;
  Placement placement = Placement::kPacked;
  uint64_t seed = 1;
  std::vector<ClusterJob> jobs;  // in the file's order, every one placed

  // The cluster GPU that each rank of job `job` runs on (GPUs numbered node by node).
  std::vector<int64_t> gpu_of_rank(size_t job) const;
  // The nodes no job holds, ascending.
  std::vector<int64_t> idle_nodes() const;
};

// Reads, decodes and checks `path`: its topology and hardware profile, every job's scenario with
// the cluster and the job's settings on top (checked like --set, located at the job's keys), the
// jobs' nodes (whole nodes, inside the cluster, no node held twice) and the placement of the jobs
// that do not list theirs. `overrides` apply to the cluster file's keys (`--set placement=random`).
// Throws config::ConfigError carrying every problem found.
ClusterFile load_cluster(const std::filesystem::path& path,
                         const std::vector<config::Override>& overrides = {});

// "0-7, 16, 18-23": ascending nodes written as runs.
std::string node_ranges(std::vector<int64_t> nodes);

}  // namespace trainsim::cluster

#endif  // TRAINSIM_SIM_CLUSTER_CLUSTER_FILE_H_
