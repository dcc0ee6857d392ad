#include "tests/engine/ideal_transport.h"

#include <simgrid/s4u.hpp>

namespace trainsim::engine {
namespace sg4 = simgrid::s4u;

void IdealTransport::build_platform() {
  auto* zone = sg4::create_full_zone("ideal");
  host_ = zone->create_host("gpus", 1.0)->seal();
  zone->seal();
}

sg4::Host* IdealTransport::host_of(int64_t) { return host_; }

void IdealTransport::collective(workload::CollectiveKind kind, const std::vector<int64_t>& members,
                                double bytes) {
  sg4::this_actor::sleep_for(cost::collective_s(kind, static_cast<int64_t>(members.size()), bytes,
                                                cost::group_links(tiers_, members)));
}

void IdealTransport::send(int64_t src, int64_t dst, double bytes) {
  sg4::this_actor::sleep_for(cost::send_s(tiers_, src, dst, bytes));
}

void IdealTransport::copy(int64_t, workload::CopyDirection, double bytes) {
  sg4::this_actor::sleep_for(cost::copy_s(tiers_, bytes));
}

}  // namespace trainsim::engine
