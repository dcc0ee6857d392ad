// Where the jobs of a cluster file that do not list their nodes go.
#ifndef TRAINSIM_SIM_CLUSTER_PLACEMENT_H_
#define TRAINSIM_SIM_CLUSTER_PLACEMENT_H_

#include <cstdint>
#include <vector>

#include "sim/cluster/cluster_file.h"

namespace trainsim::cluster {

// The nodes each job gets: `needed[j]` of `free_nodes` (ascending) for job j, none for a job that
// needs none. packed: the jobs in order take the lowest free nodes, one block each; interleaved: the
// free nodes in order go to the jobs in turn, each job leaving the round once it has its nodes;
// spread: each job in turn takes nodes evenly spaced over the nodes still free (the k-th of n at
// position floor(k F / n) of the F still free); random: a SplitMix64 shuffle of the free nodes seeded with
// `seed` (the same on every platform), then packed. Each job's nodes come back ascending (the order its ranks
// fill them). Requires the needs to sum to at most free_nodes.size().
std::vector<std::vector<int64_t>> place(Placement placement, uint64_t seed,
                                        const std::vector<int64_t>& free_nodes,
                                        const std::vector<int64_t>& needed);

}  // namespace trainsim::cluster

#endif  // TRAINSIM_SIM_CLUSTER_PLACEMENT_H_
