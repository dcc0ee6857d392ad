// A contention-free transport for the SimGrid engine: every collective, message and copy sleeps for
// its alpha-beta price (cost/alpha_beta.h) on its own. The tests use it to check the engine's
// scheduling logic apart from the network model, and to check that the event loop that runs
// `--network ideal` (engine/ideal_engine.h) reproduces the SimGrid engine exactly.
#ifndef TRAINSIM_TESTS_ENGINE_IDEAL_TRANSPORT_H_
#define TRAINSIM_TESTS_ENGINE_IDEAL_TRANSPORT_H_

#include <limits>
#include <vector>

#include "sim/cost/alpha_beta.h"
#include "sim/engine/transport.h"

namespace trainsim::engine {

class IdealTransport : public Transport {
 public:
  // One tier for everything.
  explicit IdealTransport(cost::IdealLinks links)
      : tiers_{links, links, std::numeric_limits<int64_t>::max(), {}} {}
  explicit IdealTransport(cost::IdealTiers tiers) : tiers_(std::move(tiers)) {}

  void build_platform() override;
  simgrid::s4u::Host* host_of(int64_t rank) override;
  void collective(workload::CollectiveKind kind, const std::vector<int64_t>& members, double bytes) override;
  void send(int64_t src, int64_t dst, double bytes) override;
  void copy(int64_t rank, workload::CopyDirection direction, double bytes) override;

 private:
  cost::IdealTiers tiers_;
  simgrid::s4u::Host* host_ = nullptr;
};

}  // namespace trainsim::engine

#endif  // TRAINSIM_TESTS_ENGINE_IDEAL_TRANSPORT_H_
