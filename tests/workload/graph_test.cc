// Graph storage, the writer's ordering rules, and the JSON dump.
#include "sim/workload/graph.h"

#include <gtest/gtest.h>

#include "sim/workload/builder.h"
#include "sim/workload/json.h"
#include "sim/workload/writer.h"
#include "tests/workload/workload_test_util.h"

namespace trainsim::workload {
namespace {

TEST(Graph, PredecessorsAndSuccessorsInCsr) {
  Graph g;
  const Op op;
  const OpId a = g.add(op, {});
  const OpId b = g.add(op, std::vector<OpId>{a});
  const OpId c = g.add(op, std::vector<OpId>{a, b, a});
  EXPECT_EQ(g.predecessors(c).size(), 2u);  // duplicates removed
  const Graph::Successors s = g.successors();
  EXPECT_EQ(std::vector<OpId>(s.of(a).begin(), s.of(a).end()), (std::vector<OpId>{b, c}));
  EXPECT_TRUE(s.of(c).empty());
  EXPECT_DEATH(g.add(op, std::vector<OpId>{7}), "does not exist yet");
}

// A graph takes the storage of one destroyed before it on its thread: it starts empty, its ops and
// edges its own, and graphs alive together do not share storage.
TEST(Graph, StartsEmptyOnTheStorageOfADestroyedOne) {
  Op gemm;
  gemm.kind = OpKind::kGemm;
  const void* storage = nullptr;
  {
    Graph large;
    for (int i = 0; i < 1000; ++i)
      large.add(gemm, i > 0 ? std::vector<OpId>{static_cast<OpId>(i - 1)} : std::vector<OpId>{});
    storage = large.ops().data();
  }
  Graph next;
  EXPECT_EQ(next.size(), 0u);
  EXPECT_EQ(next.edge_count(), 0u);
  EXPECT_GE(next.ops().capacity(), 1000u);
  EXPECT_EQ(static_cast<const void*>(next.ops().data()), storage);
  const OpId a = next.add(Op{}, {});
  const OpId b = next.add(gemm, std::vector<OpId>{a});
  EXPECT_EQ(next.size(), 2u);
  EXPECT_EQ(std::vector<OpId>(next.predecessors(b).begin(), next.predecessors(b).end()),
            std::vector<OpId>{a});
  EXPECT_TRUE(next.predecessors(a).empty());
  const Graph alongside;
  EXPECT_EQ(alongside.size(), 0u);
  EXPECT_NE(static_cast<const void*>(alongside.ops().data()), storage);
}

TEST(GraphWriter, ChainsStreamsButNotPointToPoint) {
  config::Parallelism p;
  p.pp = 2;
  const ParallelPlan plan(p);
  Graph g;
  GraphWriter w(g, plan, 0, config::Dtype::kBf16);
  w.set_position({Phase::kForward, 0, 0});
  const OpId gemm = w.gemm(OpLabel::kQkv, GemmPass::kForward, 4, 8, 16);
  EXPECT_EQ(g.op(gemm).flops, 2.0 * 4 * 8 * 16);
  EXPECT_EQ(g.op(gemm).bytes, 2.0 * (4 * 16 + 16 * 8 + 4 * 8));
  const OpId norm = w.memory(OpLabel::kNorm, 10);
  EXPECT_EQ(std::vector<OpId>(g.predecessors(norm).begin(), g.predecessors(norm).end()),
            (std::vector<OpId>{gemm}));
  const OpId s1 = w.send(OpLabel::kPpComm, 1, 5, 100, {norm});
  const OpId s2 = w.send(OpLabel::kPpComm, 1, 6, 100, {gemm});
  EXPECT_EQ(std::vector<OpId>(g.predecessors(s2).begin(), g.predecessors(s2).end()),
            (std::vector<OpId>{gemm}));
  EXPECT_NE(s1, s2);
  // A tensor-parallel collective on one rank is skipped.
  EXPECT_EQ(w.collective(OpLabel::kTpComm, CollectiveKind::kAllReduce, GroupKind::kTp, 8, Stream::kComm),
            kNoOp);
  const OpId pp =
      w.collective(OpLabel::kPpComm, CollectiveKind::kAllReduce, GroupKind::kPp, 8, Stream::kComm);
  EXPECT_EQ(g.op(pp).collective.seq, 0);
  EXPECT_EQ(g.op(w.collective(OpLabel::kPpComm, CollectiveKind::kAllReduce, GroupKind::kPp, 8, Stream::kComm))
                .collective.seq,
            1);
  const GraphWriter::Allocation a =
      w.alloc(OpLabel::kWorkspace, MemoryCategory::kBuffers, MemorySpace::kHbm, 64, Stream::kCompute);
  EXPECT_FALSE(w.all_released());
  w.release(a.buffer, Stream::kCompute);
  EXPECT_TRUE(w.all_released());
  EXPECT_DEATH(w.release(a.buffer, Stream::kCompute), "freed twice");
}

TEST(Graph, JsonDumpNamesEveryOp) {
  testing::PlanSpec spec;
  spec.tp = 2;
  spec.pp = 2;
  config::Scenario s = testing::make_scenario("gpt-neox-125m", 2, 1, spec);
  s.model.layers = 2;
  const ParallelPlan plan = make_plan(s);
  const Graph g = build_rank_graph(s, plan, 2);
  const nlohmann::json j = to_json(g, plan);
  EXPECT_EQ(j["rank"], 2);
  EXPECT_EQ(j["coords"]["pp"], 1);
  ASSERT_EQ(j["ops"].size(), g.size());
  size_t gemms = 0, collectives = 0, recvs = 0;
  for (const auto& op : j["ops"]) {
    EXPECT_FALSE(op["name"].get<std::string>().empty());
    if (op["kind"] == "gemm") {
      ++gemms;
      EXPECT_GT(op["gemm"]["m"].get<int64_t>(), 0);
    }
    if (op["kind"] == "collective") {
      ++collectives;
      EXPECT_EQ(op["collective"]["members"], 2);
    }
    if (op["kind"] == "recv") {
      ++recvs;
      EXPECT_EQ(op["p2p"]["peer"], 0);
    }
  }
  EXPECT_GT(gemms, 0u);
  EXPECT_GT(collectives, 0u);
  EXPECT_EQ(recvs, 2u);  // the two micro-batches' activations
  EXPECT_EQ(j.dump(), to_json(build_rank_graph(s, plan, 2), plan).dump());
}

}  // namespace
}  // namespace trainsim::workload
