// What the engine needs from the network, as blocking calls made from inside a SimGrid actor (the
// LevelDB `Env` pattern: the SimGrid platform is one implementation; tests use an ideal one).
#ifndef TRAINSIM_SIM_ENGINE_TRANSPORT_H_
#define TRAINSIM_SIM_ENGINE_TRANSPORT_H_

#include <cstdint>
#include <vector>

#include "sim/workload/graph.h"

namespace simgrid::s4u {
class Host;
}  // namespace simgrid::s4u

namespace trainsim::engine {

class Transport {
 public:
  virtual ~Transport() = default;

  // Builds the platform. Called once, after the SimGrid Engine exists and before any actor.
  virtual void build_platform() = 0;
  // The SimGrid host that stands for GPU `rank` (its stream actors run there).
  virtual simgrid::s4u::Host* host_of(int64_t rank) = 0;
  // Runs one collective among `members` (global ranks, ascending) with nccl-tests size `bytes`,
  // all members having arrived; returns when every member has its result. Blocks the caller.
  virtual void collective(workload::CollectiveKind kind, const std::vector<int64_t>& members,
                          double bytes) = 0;
  // Moves `bytes` from GPU `src` to GPU `dst`. Blocks the caller.
  virtual void send(int64_t src, int64_t dst, double bytes) = 0;
  // Copies `bytes` between GPU `rank` and pinned host memory of its node. Blocks the caller.
  virtual void copy(int64_t rank, workload::CopyDirection direction, double bytes) = 0;
};

}  // namespace trainsim::engine

#endif  // TRAINSIM_SIM_ENGINE_TRANSPORT_H_
