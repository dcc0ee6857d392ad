// Graph invariants (acyclic, matched receives, collectives entered by every member with one size,
// every allocation freed) and symmetry (ranks of a class run the same graph up to renaming), on a
// matrix of small plans covering every scheme, and on every shipped scenario.
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "sim/config/loader.h"
#include "sim/workload/builder.h"
#include "sim/workload/validate.h"
#include "tests/workload/workload_test_util.h"

namespace trainsim::workload {
namespace {

using config::Recompute;
using config::Schedule;
using config::SequenceParallel;

struct Case {
  std::string name;
  const char* preset;
  int64_t seq_len;  // 0: the preset's
  int64_t layers;   // 0: the preset's
  int64_t global_batch;
  testing::PlanSpec plan;
  int64_t fpdt_chunk = 0;
  bool offload = true;
  bool cpu_checkpointing = false;
  bool overlap = true;
  bool dense = false;  // drop the preset's experts (keep its attention)
};

std::vector<Case> cases() {
  const auto plan = [](int64_t tp, int64_t pp, int64_t dp, int64_t sp, SequenceParallel seq, int zero,
                       Recompute rc, Schedule sch = Schedule::kOneFOneB, int64_t vpp = 1, int64_t ep = 1) {
    testing::PlanSpec p;
    p.tp = tp;
    p.pp = pp;
    p.dp = dp;
    p.sp = sp;
    p.sequence = seq;
    p.zero = zero;
    p.recompute = rc;
    p.schedule = sch;
    p.vpp = vpp;
    p.ep = ep;
    return p;
  };
  const auto folded = [](testing::PlanSpec p, int64_t expert_tp) {
    p.expert_tp = expert_tp;
    return p;
  };
  return {
      {"tp_pp_dp", "megatron-1.7b", 512, 4, 8,
       plan(2, 2, 2, 1, SequenceParallel::kNone, 0, Recompute::kNone)},
      {"megatron_sp_zero1", "megatron-1.7b", 512, 4, 4,
       plan(2, 2, 1, 1, SequenceParallel::kMegatron, 1, Recompute::kSelective)},
      {"interleaved_full", "megatron-1.7b", 512, 8, 4,
       plan(1, 2, 2, 1, SequenceParallel::kNone, 0, Recompute::kFull, Schedule::kInterleaved, 2)},
      {"gpipe_swiglu", "llama3-8b", 512, 4, 4,
       plan(2, 2, 1, 1, SequenceParallel::kMegatron, 0, Recompute::kFull, Schedule::kGpipe)},
      {"ulysses_zero3", "llama3-8b", 1024, 2, 4,
       plan(1, 1, 2, 4, SequenceParallel::kUlysses, 3, Recompute::kNone)},
      {"ring_tp_pp", "llama3-8b", 1024, 4, 2, plan(2, 2, 1, 2, SequenceParallel::kRing, 1, Recompute::kFull)},
      {"fpdt_offload", "llama3-8b", 16384, 2, 1,
       plan(1, 1, 1, 4, SequenceParallel::kFpdt, 3, Recompute::kFull), 4096, true, true},
      {"fpdt_gpu", "megatron-1.7b", 8192, 2, 2,
       plan(1, 1, 2, 2, SequenceParallel::kFpdt, 2, Recompute::kNone), 2048, false},
      {"zero_bubble_tp_pp_dp", "megatron-1.7b", 512, 4, 8,
       plan(2, 2, 2, 1, SequenceParallel::kNone, 1, Recompute::kNone, Schedule::kZeroBubble)},
      {"zero_bubble_interleaved_sp", "llama3-8b", 512, 8, 4,
       plan(2, 2, 1, 1, SequenceParallel::kMegatron, 0, Recompute::kFull, Schedule::kZeroBubble, 2)},
      {"zero_bubble_ring", "llama3-8b", 1024, 4, 2,
       plan(1, 2, 1, 2, SequenceParallel::kRing, 1, Recompute::kSelective, Schedule::kZeroBubble)},
      {"zb_v_tied", "megatron-1.7b", 512, 8, 6,
       plan(2, 2, 2, 1, SequenceParallel::kNone, 1, Recompute::kNone, Schedule::kZbV, 2)},
      {"zb_v_sp_pp4", "llama3-8b", 512, 8, 2,
       plan(2, 4, 1, 1, SequenceParallel::kMegatron, 0, Recompute::kSelective, Schedule::kZbV, 2)},
      // DualPipeV's overlapped pairs on two lanes: TP + SP collectives in both lanes; ring attention.
      {"dualpipev_sp_tied", "megatron-1.7b", 512, 8, 8,
       plan(2, 2, 2, 1, SequenceParallel::kMegatron, 1, Recompute::kSelective, Schedule::kDualPipeV, 2)},
      {"dualpipev_ring_pp3", "llama3-8b", 1024, 6, 6,
       plan(1, 3, 1, 2, SequenceParallel::kRing, 1, Recompute::kFull, Schedule::kDualPipeV, 2)},
      {"zero2_no_overlap", "gpt-neox-125m", 512, 2, 8,
       plan(1, 1, 2, 1, SequenceParallel::kNone, 2, Recompute::kSelective), 0, true, false, false},
      // Mixtures of experts: shared experts and a dense first layer under TP + SP; zero bubble; ring.
      {"moe_shared_tp_sp", "deepseek-moe-16b", 512, 4, 8,
       plan(2, 2, 4, 1, SequenceParallel::kMegatron, 1, Recompute::kSelective, Schedule::kOneFOneB, 1, 2)},
      {"moe_zero_bubble", "mixtral-8x7b", 512, 4, 8,
       plan(1, 2, 4, 1, SequenceParallel::kNone, 0, Recompute::kNone, Schedule::kZeroBubble, 1, 4)},
      {"moe_dualpipev", "deepseek-v2-lite", 512, 4, 16,
       plan(1, 2, 4, 1, SequenceParallel::kNone, 1, Recompute::kNone, Schedule::kDualPipeV, 2, 4)},
      {"moe_ring_full", "qwen3-30b-a3b", 1024, 2, 4,
       plan(2, 1, 2, 2, SequenceParallel::kRing, 2, Recompute::kFull, Schedule::kOneFOneB, 1, 2)},
      // MoE parallel folding: every tp rank its own expert group member, or half of them.
      {"moe_folded_etp1", "qwen3-30b-a3b", 512, 2, 8,
       folded(plan(2, 2, 2, 1, SequenceParallel::kMegatron, 1, Recompute::kNone, Schedule::kOneFOneB, 1, 4),
              1)},
      {"moe_folded_etp2_shared", "deepseek-moe-16b", 512, 3, 4,
       folded(plan(4, 1, 2, 1, SequenceParallel::kMegatron, 1, Recompute::kFull, Schedule::kOneFOneB, 1, 4),
              2)},
      // Multi-head latent attention: query latents under TP + SP with zero bubble; queries without a
      // latent under plain TP; Ulysses.
      {"mla_sp_zero_bubble", "deepseek-v2", 512, 4, 8,
       plan(4, 2, 2, 1, SequenceParallel::kMegatron, 1, Recompute::kNone, Schedule::kZeroBubble, 1, 2)},
      {"mla_lite_tp_full", "deepseek-v2-lite", 512, 2, 4,
       plan(2, 1, 2, 1, SequenceParallel::kMegatron, 0, Recompute::kFull, Schedule::kOneFOneB, 1, 2)},
      {"mla_dense_plain_tp", "deepseek-v2", 512, 4, 4,
       plan(4, 2, 1, 1, SequenceParallel::kNone, 0, Recompute::kNone, Schedule::kZeroBubble), 0, true, false,
       true, true},
      {"mla_ulysses", "deepseek-v3", 1024, 4, 4,
       plan(1, 1, 2, 4, SequenceParallel::kUlysses, 1, Recompute::kSelective, Schedule::kOneFOneB, 1, 2)},
  };
}

// Names the case in test listings (ctest shows the parameter).
void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

config::Scenario scenario_of(const Case& c) {
  config::Scenario s = testing::make_scenario(c.preset, c.global_batch, 1, c.plan);
  if (c.seq_len) s.model.seq_len = c.seq_len;
  if (c.layers) s.model.layers = c.layers;
  if (c.fpdt_chunk) s.parallelism.fpdt.chunk_tokens = c.fpdt_chunk;
  s.parallelism.fpdt.offload = c.offload;
  s.parallelism.cpu_checkpointing = c.cpu_checkpointing;
  s.parallelism.overlap_grad_reduce = c.overlap;
  if (c.dense) s.model.moe = {};
  return s;
}

class EveryScheme : public ::testing::TestWithParam<Case> {};

TEST_P(EveryScheme, EveryRankGraphIsSoundAndMatchesItsPeers) {
  const config::Scenario s = scenario_of(GetParam());
  const ParallelPlan plan = make_plan(s);
  const std::vector<Graph> graphs = testing::build_all_ranks(s, plan);
  for (const Graph& g : graphs) {
    for (const std::string& problem : check_graph(plan, g)) ADD_FAILURE() << problem;
  }
  for (const std::string& problem : check_matching(plan, graphs)) ADD_FAILURE() << problem;
}

TEST_P(EveryScheme, RanksOfAClassAreIdenticalUpToRenaming) {
  const config::Scenario s = scenario_of(GetParam());
  const ParallelPlan plan = make_plan(s);
  const std::vector<Graph> classes = build_class_graphs(s, plan);
  for (int64_t rank = 0; rank < plan.world_size(); ++rank) {
    const Graph g = build_rank_graph(s, plan, rank);
    EXPECT_EQ(check_equivalent(plan, classes[plan.class_of(rank)], g), "") << "rank " << rank;
  }
  for (const std::string& problem : check_class_matching(plan, classes)) ADD_FAILURE() << problem;
}

TEST_P(EveryScheme, GraphsAreDeterministic) {
  const config::Scenario s = scenario_of(GetParam());
  const ParallelPlan plan = make_plan(s);
  const int64_t last = plan.world_size() - 1;
  EXPECT_EQ(check_equivalent(plan, build_rank_graph(s, plan, last), build_rank_graph(s, plan, last)), "");
}

INSTANTIATE_TEST_SUITE_P(Workload, EveryScheme, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<Case>& param) { return param.param.name; });

TEST(Validate, ReportsBrokenGraphs) {
  testing::PlanSpec spec;
  spec.pp = 2;
  const config::Scenario s = testing::make_scenario("gpt-neox-125m", 2, 1, spec);
  const ParallelPlan plan = make_plan(s);
  std::vector<Graph> graphs = testing::build_all_ranks(s, plan);
  // Drop rank 1's graph: rank 0's sends lose their receives.
  graphs[1] = Graph();
  graphs[1].info.rank = 1;
  EXPECT_FALSE(check_matching(plan, graphs).empty());
  // A buffer that is never freed.
  Graph leak;
  leak.info.buffers = 1;
  Op alloc;
  alloc.kind = OpKind::kAlloc;
  alloc.buffer = {0, MemorySpace::kHbm, MemoryCategory::kBuffers};
  alloc.bytes = 1;
  leak.add(alloc, {});
  EXPECT_EQ(check_graph(plan, leak).size(), 1u);
}

// Every scenario shipped in scenarios/ builds, and its class graphs pass the invariants; plans of up
// to 16 ranks are also checked rank by rank.
TEST(ShippedScenarios, GraphsPassTheInvariants) {
  const std::filesystem::path dir = std::filesystem::path(TRAINSIM_SOURCE_DIR) / "scenarios";
  std::vector<std::filesystem::path> files;
  if (std::filesystem::exists(dir)) {
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
      if (entry.path().extension() == ".yaml") files.push_back(entry.path());
    }
  }
  std::sort(files.begin(), files.end());
  if (files.empty()) GTEST_SKIP() << "no scenarios in " << dir;
  for (const std::filesystem::path& file : files) {
    SCOPED_TRACE(file.string());
    const config::Scenario s = config::load_scenario(file);
    const ParallelPlan plan = make_plan(s);
    const std::vector<Graph> classes = build_class_graphs(s, plan);
    for (const Graph& g : classes) {
      for (const std::string& problem : check_graph(plan, g)) ADD_FAILURE() << problem;
    }
    for (const std::string& problem : check_class_matching(plan, classes)) ADD_FAILURE() << problem;
    // Small plans: every rank, without relying on symmetry.
    if (plan.world_size() <= 16) {
      const std::vector<Graph> all = testing::build_all_ranks(s, plan);
      for (const std::string& problem : check_matching(plan, all)) ADD_FAILURE() << problem;
      for (const Graph& g : all) {
        EXPECT_EQ(check_equivalent(plan, classes[plan.class_of(g.info.rank)], g), "")
            << "rank " << g.info.rank;
      }
    }
  }
}

}  // namespace
}  // namespace trainsim::workload
