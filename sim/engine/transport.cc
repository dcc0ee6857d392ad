#include "sim/engine/transport.h"

#include <simgrid/s4u/Actor.hpp>

namespace trainsim::engine {
namespace {

namespace sg4 = simgrid::s4u;

// Runs play(item) for every item of `items` on an actor of its own, on the caller's host, and returns
// when all have.
template <class T, class Play>
void play_each(const std::vector<T>& items, Play play) {
  std::vector<sg4::ActorPtr> actors;
  actors.reserve(items.size());
  for (const T& item : items) {
    actors.push_back(sg4::Actor::create("each", sg4::this_actor::get_host(), [&item, play] { play(item); }));
  }
  for (const sg4::ActorPtr& actor : actors) actor->join();
}

}  // namespace

std::vector<bool> Transport::coupled(const std::vector<Traffic>& /*anchors*/,
                                     const std::vector<Traffic>& candidates) {
  return std::vector<bool>(candidates.size(), false);
}

void Transport::sends(const std::vector<std::pair<int64_t, int64_t>>& pairs, double bytes) {
  play_each(pairs, [this, bytes](const std::pair<int64_t, int64_t>& p) { send(p.first, p.second, bytes); });
}

void Transport::copies(const std::vector<int64_t>& gpus, workload::CopyDirection direction, double bytes) {
  play_each(gpus, [this, direction, bytes](int64_t gpu) { copy(gpu, direction, bytes); });
}

}  // namespace trainsim::engine
