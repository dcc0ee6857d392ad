// Invariant checks on operation graphs, for tests and `trainsim workload --check`. Each function
// returns the problems found (empty when the graphs are sound), at most `kMaxProblems` of them.
#ifndef TRAINSIM_SIM_WORKLOAD_VALIDATE_H_
#define TRAINSIM_SIM_WORKLOAD_VALIDATE_H_

#include <string>
#include <vector>

#include "sim/workload/graph.h"
#include "sim/workload/plan.h"

namespace trainsim::workload {

inline constexpr size_t kMaxProblems = 20;

// One graph: predecessors precede their op (so the graph is acyclic); every buffer is allocated
// once and freed once, later, with the same size; collective sequence numbers count up from 0 per
// group; group and peer ranks exist; the free of a buffer is not ordered before its allocation.
std::vector<std::string> check_graph(const ParallelPlan& plan, const Graph& graph);

// Graphs of every rank (graphs[r] is rank r's): every receive has exactly one send with the same
// (sender, receiver, tag) and size and vice versa; the k-th collective on a group is entered by
// every member with the same kind and size.
std::vector<std::string> check_matching(const ParallelPlan& plan, const std::vector<Graph>& graphs);

// The same checks through symmetry (class_graphs[c] is the graph of class c's representative):
// assumes every member of a class runs its representative's graph up to renaming, which
// check_equivalent verifies on small plans.
std::vector<std::string> check_class_matching(const ParallelPlan& plan,
                                              const std::vector<Graph>& class_graphs);

// Whether `b` equals `a` up to renaming (renaming.h): ranks of one class, the same ops, streams,
// shapes, sizes, tags and dependencies; collectives on the same group kind with the same sequence
// numbers; b's peers a's renamed. Returns the first difference, empty when equivalent.
std::string check_equivalent(const ParallelPlan& plan, const Graph& a, const Graph& b);

}  // namespace trainsim::workload

#endif  // TRAINSIM_SIM_WORKLOAD_VALIDATE_H_
