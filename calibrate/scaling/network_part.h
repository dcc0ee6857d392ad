// Network parts: the cited properties of one kind of link (an NVLink generation through its
// NVSwitch, an InfiniBand or RoCE NIC, a PCIe generation), one small YAML file each under
// calibrate/profiles/network/. Topology files cite them; `trainsim calibrate scale` uses them to
// carry measured collective tables from one fabric to another.
//
//   schema_version: 1
//   name: nvlink4
//   description: ...
//   tier: intra_node          # intra_node (GPU to GPU inside an NVLink domain), inter_node (NIC), host
//   (PCIe) bandwidth: 450GB/s        # per GPU (per NIC, per x16 link), per direction, as data latency: 130ns
//   # optional line_rate: 200Gbps        # optional: the signalling rate, when it differs from `bandwidth`
//   in_network_reduction: true  # optional: the switch reduces (NVLink SHARP, InfiniBand SHARP)
//   sources: {bandwidth: "...", ...}   # every number needs one
#ifndef TRAINSIM_CALIBRATE_SCALING_NETWORK_PART_H_
#define TRAINSIM_CALIBRATE_SCALING_NETWORK_PART_H_

#include <filesystem>
#include <map>
#include <string>

namespace trainsim::calibrate {

enum class NetworkTier { kIntraNode, kInterNode, kHost };

struct NetworkPart {
  std::filesystem::path path;
  std::string name;
  std::string description;
  NetworkTier tier = NetworkTier::kIntraNode;
  double bandwidth_bytes_per_s = 0;
  double latency_s = 0;              // 0 when not given
  double line_rate_bytes_per_s = 0;  // 0 when not given
  bool in_network_reduction = false;
  std::map<std::string, std::string> sources;
  std::string content_hash;
};

// Reads a network part. Throws config::ConfigError listing every problem (located at
// file:line:col): unknown keys (with a did-you-mean), missing or malformed values, numbers without
// a source, schema_version other than 1.
NetworkPart load_network_part(const std::filesystem::path& path);

}  // namespace trainsim::calibrate

#endif  // TRAINSIM_CALIBRATE_SCALING_NETWORK_PART_H_
