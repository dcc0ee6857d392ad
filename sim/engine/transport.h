// What the engine needs from the network, as blocking calls made from inside a SimGrid actor (the
// LevelDB `Env` pattern: the SimGrid platform is one implementation; tests use an ideal one).
#ifndef TRAINSIM_SIM_ENGINE_TRANSPORT_H_
#define TRAINSIM_SIM_ENGINE_TRANSPORT_H_

#include <cstdint>
#include <utility>
#include <vector>

#include "sim/workload/graph.h"

namespace simgrid::s4u {
class Host;
}  // namespace simgrid::s4u

namespace trainsim::engine {

// One communication, as far as the links it may load go: a collective among `gpus` (its members), a
// send from gpus[0] to gpus[1], or a copy between gpus[0] and its node's host memory.
struct Traffic {
  enum class Kind { kCollective, kSend, kCopy };
  Kind kind = Kind::kCollective;
  workload::CollectiveKind collective = workload::CollectiveKind::kAllReduce;  // kCollective
  workload::CopyDirection direction = workload::CopyDirection::kHostToDevice;  // kCopy
  std::vector<int64_t> gpus;
  double bytes = 0;
};

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

  // Mirrored traffic (engine.h, EngineOptions::mirror): what a collapsed run plays for the ranks it
  // does not simulate, and the simulated rank's own send or copy with it.
  //
  // Which of `candidates` may share a link with `anchors`, directly or through other candidates: the
  // only ones whose flows can change the anchors' rates (max-min sharing couples flows through
  // common links alone). Call after build_platform. Default (a contention-free network): none.
  virtual std::vector<bool> coupled(const std::vector<Traffic>& anchors,
                                    const std::vector<Traffic>& candidates);
  // The sends of `bytes` from first to second of each pair, all at once, as send() plays one;
  // returns when every one has arrived. Blocks the caller. Default: send() on an actor per pair.
  virtual void sends(const std::vector<std::pair<int64_t, int64_t>>& pairs, double bytes);
  // The copies of `bytes` of every GPU of `gpus` at once, as copy() plays one. Blocks the caller.
  // Default: copy() on an actor per GPU.
  virtual void copies(const std::vector<int64_t>& gpus, workload::CopyDirection direction, double bytes);
};

}  // namespace trainsim::engine

#endif  // TRAINSIM_SIM_ENGINE_TRANSPORT_H_
