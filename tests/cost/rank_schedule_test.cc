// The per-rank scheduling rules the engine and the estimate share: the host issuing ops in program
// order (dispatch time per op, waits at synchronisations), the collectives in flight that slow a
// kernel, and memory accounting.
#include "sim/cost/rank_schedule.h"

#include <vector>

#include <gtest/gtest.h>

namespace trainsim::cost {
namespace {

using workload::Graph;
using workload::Op;
using workload::OpKind;

Op op_of(OpKind kind, double bytes = 0) {
  Op op;
  op.kind = kind;
  op.bytes = bytes;
  return op;
}

TEST(HostDispatch, IssuesInProgramOrderAndWaitsAtSynchronisations) {
  Graph g;
  g.add(op_of(OpKind::kMemory), std::vector<workload::OpId>{});     // 0: issued at 10 us
  g.add(op_of(OpKind::kAlloc), std::vector<workload::OpId>{});      // 1: bookkeeping, no dispatch
  g.add(op_of(OpKind::kGemm), std::vector<workload::OpId>{0});      // 2: 20 us
  g.add(op_of(OpKind::kHostSync), std::vector<workload::OpId>{2});  // 3: 30 us, then the host waits for it
  g.add(op_of(OpKind::kGemm), std::vector<workload::OpId>{});       // 4: after the sync ends
  HostDispatch host(g, 10e-6);
  host.begin_iteration(1.0);
  EXPECT_DOUBLE_EQ(*host.issue_s(2), 1.0 + 20e-6);
  EXPECT_DOUBLE_EQ(*host.issue_s(0), 1.0 + 10e-6);
  EXPECT_DOUBLE_EQ(*host.issue_s(1), 1.0 + 10e-6);
  EXPECT_DOUBLE_EQ(*host.issue_s(3), 1.0 + 30e-6);
  EXPECT_FALSE(host.issue_s(4).has_value());  // the host waits at op 3
  host.finished(2, 1.5);                      // not the synchronisation: still waiting
  EXPECT_FALSE(host.issue_s(4).has_value());
  host.finished(3, 2.0);
  EXPECT_DOUBLE_EQ(*host.issue_s(4), 2.0 + 10e-6);
  host.begin_iteration(3.0);  // the next iteration starts over
  EXPECT_DOUBLE_EQ(*host.issue_s(0), 3.0 + 10e-6);
}

// A kernel's slowdown is decided by the collectives in flight once every event of its start instant
// has happened, whatever order they happened in.
TEST(CollectivesInFlight, AnswersForTheEndOfAnInstant) {
  CollectivesInFlight in_flight;
  EXPECT_FALSE(in_flight.after_instant(0.0));
  in_flight.change(1, 1.0);   // begins at 1
  in_flight.change(-1, 2.0);  // ends at 2, and another begins at 2
  in_flight.change(1, 2.0);
  in_flight.change(1, 3.0);  // begins at 3 and ends at 3
  in_flight.change(-1, 3.0);
  in_flight.change(-1, 3.0);  // the one of 2 ends at 3
  EXPECT_FALSE(in_flight.after_instant(0.5));
  EXPECT_TRUE(in_flight.after_instant(1.0));  // one that begins at a kernel's instant counts
  EXPECT_TRUE(in_flight.after_instant(1.5));
  EXPECT_TRUE(in_flight.after_instant(2.0));   // one ended, another began
  EXPECT_FALSE(in_flight.after_instant(3.0));  // every one has ended by the end of 3
  EXPECT_FALSE(in_flight.after_instant(7.0));
}

TEST(MemoryTracker, TracksPeaksByCategoryAndHostMemoryApart) {
  Op a = op_of(OpKind::kAlloc, 100);
  a.buffer.category = workload::MemoryCategory::kWeights;
  Op b = op_of(OpKind::kAlloc, 50);
  b.buffer.category = workload::MemoryCategory::kActivations;
  Op f = op_of(OpKind::kFree, 50);
  f.buffer.category = workload::MemoryCategory::kActivations;
  Op h = op_of(OpKind::kAlloc, 1000);
  h.buffer.space = workload::MemorySpace::kHost;
  MemoryTracker m(true);
  m.apply(a, 0);
  m.apply(b, 1);
  m.apply(f, 2);
  m.apply(h, 3);
  m.apply(op_of(OpKind::kGemm), 4);  // not memory: ignored
  EXPECT_DOUBLE_EQ(m.peak_hbm_bytes(), 150);
  EXPECT_DOUBLE_EQ(m.hbm_at_peak_bytes()[static_cast<size_t>(workload::MemoryCategory::kActivations)], 50);
  EXPECT_DOUBLE_EQ(m.peak_host_bytes(), 1000);
  EXPECT_EQ(m.hbm_samples().size(), 3u);
}

}  // namespace
}  // namespace trainsim::cost
