#include "sim/cluster/placement.h"

#include <algorithm>
#include <numeric>
#include <stdexcept>

#include "sim/common/random.h"

namespace trainsim::cluster {
namespace {

std::vector<std::vector<int64_t>> packed(const std::vector<int64_t>& nodes,
                                         const std::vector<int64_t>& needed) {
  std::vector<std::vector<int64_t>> out(needed.size());
  size_t next = 0;
  for (size_t j = 0; j < needed.size(); ++j) {
    for (int64_t k = 0; k < needed[j]; ++k) out[j].push_back(nodes[next++]);
  }
  return out;
}

std::vector<std::vector<int64_t>> interleaved(const std::vector<int64_t>& nodes,
                                              const std::vector<int64_t>& needed) {
  std::vector<std::vector<int64_t>> out(needed.size());
  size_t next = 0;
  for (bool gave = true; gave;) {
    gave = false;
    for (size_t j = 0; j < needed.size(); ++j) {
      if (static_cast<int64_t>(out[j].size()) == needed[j]) continue;
      out[j].push_back(nodes[next++]);
      gave = true;
    }
  }
  return out;
}

std::vector<std::vector<int64_t>> spread(std::vector<int64_t> nodes, const std::vector<int64_t>& needed) {
  std::vector<std::vector<int64_t>> out(needed.size());
  for (size_t j = 0; j < needed.size(); ++j) {
    const auto n = static_cast<size_t>(needed[j]);
    std::vector<int64_t> rest;
    for (size_t i = 0, k = 0; i < nodes.size(); ++i) {
      if (k < n && i == k * nodes.size() / n) {
        out[j].push_back(nodes[i]);
        ++k;
      } else {
        rest.push_back(nodes[i]);
      }
    }
    nodes = std::move(rest);
  }
  return out;
}

// Fisher-Yates on a SplitMix64 stream.
std::vector<int64_t> shuffled(std::vector<int64_t> nodes, uint64_t seed) {
  uint64_t state = splitmix64(seed);
  for (size_t i = nodes.size(); i > 1; --i) {
    state = splitmix64(state);
    std::swap(nodes[i - 1], nodes[state % i]);
  }
  return nodes;
}

}  // namespace

std::vector<std::vector<int64_t>> place(Placement placement, uint64_t seed,
                                        const std::vector<int64_t>& free_nodes,
                                        const std::vector<int64_t>& needed) {
  if (std::accumulate(needed.begin(), needed.end(), int64_t{0}) > static_cast<int64_t>(free_nodes.size())) {
    throw std::invalid_argument("place: the jobs need more nodes than are free");
  }
  std::vector<std::vector<int64_t>> out;
  switch (placement) {
    case Placement::kPacked:
      out = packed(free_nodes, needed);
      break;
    case Placement::kInterleaved:
      out = interleaved(free_nodes, needed);
      break;
    case Placement::kSpread:
      out = spread(free_nodes, needed);
      break;
    case Placement::kRandom:
      out = packed(shuffled(free_nodes, seed), needed);
      break;
  }
  for (std::vector<int64_t>& nodes : out) std::sort(nodes.begin(), nodes.end());
  return out;
}

}  // namespace trainsim::cluster
