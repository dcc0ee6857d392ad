// Typed topology file: what one node looks like inside and how nodes are connected. Produced by
// `load_topology` (sim/config/loader.h); sim/platform turns it into a graph and a SimGrid platform.
// Bandwidths are per direction (links are full duplex) in bytes/s; latencies in seconds.
#ifndef TRAINSIM_SIM_CONFIG_TOPOLOGY_H_
#define TRAINSIM_SIM_CONFIG_TOPOLOGY_H_

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "sim/config/types.h"
#include "sim/config/what_if.h"

namespace trainsim::config {

struct LinkSpec {
  double bandwidth_bytes_per_s = 0;  // per direction
  double latency_s = 0;
};

// GPU-to-GPU connectivity inside a node (an NVLink domain may span a whole rack, NVL72-style).
//   nvswitch     every GPU has one link of `link` bandwidth into a non-blocking switch
//   nvlink-mesh  every pair of GPUs has its own direct link of `link` bandwidth (HGX 4-GPU boards)
//   pcie         GPUs talk through the PCIe tree (`pcie`), `link` is the peer-to-peer path
struct IntraNode {
  IntraNodeKind kind = IntraNodeKind::kNvSwitch;
  LinkSpec link;      // per direction: per GPU (nvswitch, pcie) or per GPU pair (nvlink-mesh)
  bool nvls = false;  // NVSwitch in-network reduction (NVLink SHARP) is available
};

// The PCIe tree between GPUs, NICs and the host. GPUs and NICs that share a PCIe switch share its
// uplink to the CPU root complex.
struct Pcie {
  LinkSpec link;                // per GPU (x16) link, per direction
  int64_t gpus_per_switch = 1;  // GPUs behind one PCIe switch
  int64_t nics_per_switch = 1;  // NICs behind the same switch (they contend with host copies)
  double switch_uplink_bandwidth_bytes_per_s = 0;  // switch to root complex, per direction
};

struct Nics {
  int64_t count = 0;  // per node
  LinkSpec link;      // per NIC, per direction
};

struct NodeSpec {
  int64_t gpus = 0;
  IntraNode intra;
  Pcie pcie;
  Nics nics;
  double host_memory_bytes = 0;
  double host_memory_bandwidth_bytes_per_s = 0;
  // What the node draws beyond its GPUs while it trains (CPUs, memory, NICs, NVSwitches, fans, power
  // supply losses), in W; 0: not given (power reports then count the GPUs alone).
  double other_power_w = 0;
};

// How nodes are connected. Which fields matter depends on `kind`:
//   single-node     nodes == 1
//   fat-tree        levels, oversubscription, link, switch_latency_s
//   rail-optimized  NIC i of every node on rail switch i; spine oversubscription, link
//   dragonfly       groups, routers_per_group, nodes_per_router, global_links_per_router, link
//   torus           dims (product == nodes), link
struct Fabric {
  FabricKind kind = FabricKind::kSingleNode;
  int64_t nodes = 1;
  LinkSpec link;  // switch-to-switch links, per direction
  double switch_latency_s = 0;
  int levels = 2;
  double oversubscription = 1.0;  // downlink : uplink bandwidth at each leaf (1 = non-blocking)
  FabricRouting routing = FabricRouting::kAdaptive;  // fat-tree and rail-optimized only
  int64_t ecmp_seed = 0;                             // the ECMP hash's seed (routing ecmp)
  int64_t groups = 0;
  int64_t routers_per_group = 0;
  int64_t nodes_per_router = 0;
  int64_t global_links_per_router = 0;
  std::vector<int64_t> dims;
};

struct Topology {
  std::filesystem::path path;  // absolute, normalised; empty when built in code
  std::string name;
  std::string description;
  std::string content_hash;  // of the file (and what it extends), for provenance
  NodeSpec node;
  Fabric fabric;
  // The values a scenario, cluster file or --set put over the file's (what_if.h); empty for the file
  // as it is.
  std::vector<WhatIf> what_if;

  int64_t total_gpus() const { return node.gpus * fabric.nodes; }
};

}  // namespace trainsim::config

#endif  // TRAINSIM_SIM_CONFIG_TOPOLOGY_H_
