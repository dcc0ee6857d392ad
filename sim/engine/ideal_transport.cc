#include "sim/engine/ideal_transport.h"

#include <simgrid/s4u.hpp>

namespace trainsim::engine {
namespace sg4 = simgrid::s4u;

double IdealTransport::collective_s(workload::CollectiveKind kind, int64_t ranks, double bytes,
                                    const IdealLinks& links) {
  if (ranks <= 1) return 0;
  const double n = static_cast<double>(ranks);
  const double a = links.latency_s;
  const double b = links.bandwidth_bytes_per_s;
  switch (kind) {
    case workload::CollectiveKind::kAllReduce:
      return 2 * (n - 1) / n * bytes / b + 2 * (n - 1) * a;
    case workload::CollectiveKind::kAllGather:
    case workload::CollectiveKind::kReduceScatter:
    case workload::CollectiveKind::kAllToAll:
      return (n - 1) / n * bytes / b + (n - 1) * a;
    case workload::CollectiveKind::kBarrier:
      return 2 * (n - 1) * a;
  }
  return 0;
}

const IdealLinks& IdealTransport::tier(const std::vector<int64_t>& ranks) const {
  for (const int64_t r : ranks) {
    if (r / gpus_per_node_ != ranks.front() / gpus_per_node_) return inter_;
  }
  return intra_;
}

void IdealTransport::build_platform() {
  auto* zone = sg4::create_full_zone("ideal");
  host_ = zone->create_host("gpus", 1.0)->seal();
  zone->seal();
}

sg4::Host* IdealTransport::host_of(int64_t) { return host_; }

void IdealTransport::collective(workload::CollectiveKind kind, const std::vector<int64_t>& members,
                                double bytes) {
  sg4::this_actor::sleep_for(collective_s(kind, static_cast<int64_t>(members.size()), bytes, tier(members)));
}

void IdealTransport::send(int64_t src, int64_t dst, double bytes) {
  const IdealLinks& links = tier({src, dst});
  sg4::this_actor::sleep_for(links.latency_s + bytes / links.bandwidth_bytes_per_s);
}

void IdealTransport::copy(int64_t, workload::CopyDirection, double bytes) {
  sg4::this_actor::sleep_for(intra_.copy_latency_s + bytes / intra_.copy_bandwidth_bytes_per_s);
}

}  // namespace trainsim::engine
