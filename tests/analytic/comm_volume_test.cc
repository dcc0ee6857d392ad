// The closed-form communication model against the graphs' communication logs, scheme by scheme:
// same volume per collective kind and group, same call counts and message sizes where the closed
// form names them.
#include "sim/analytic/comm_volume.h"

#include <map>
#include <optional>

#include <gtest/gtest.h>

#include "sim/workload/builder.h"
#include "tests/workload/workload_test_util.h"

namespace trainsim::analytic {
namespace {

using config::Recompute;
using config::SequenceParallel;
using workload::CommKind;
using workload::GroupKind;

struct Totals {
  double volume = 0;
};
using Key = std::pair<int, int>;

struct Case {
  const char* name;
  const char* preset;
  int64_t seq_len, layers, batch;
  testing::PlanSpec plan;
  int64_t chunk = 0;
  bool offload = true;
  bool dense = false;  // drop the preset's experts (keep its attention)
  config::CpComm cp_comm = config::CpComm::kP2p;
  config::Framework framework = config::Framework::kGeneric;
  std::optional<bool> reshard_after_forward = std::nullopt;
};

TEST(ExpectedComm, MatchesTheGraphsForEveryScheme) {
  const auto plan = [](int64_t tp, int64_t pp, int64_t dp, int64_t sp, SequenceParallel seq, int zero,
                       Recompute rc, int64_t vpp = 1, int64_t ep = 1) {
    testing::PlanSpec p;
    p.tp = tp;
    p.pp = pp;
    p.dp = dp;
    p.sp = sp;
    p.sequence = seq;
    p.zero = zero;
    p.recompute = rc;
    p.vpp = vpp;
    p.ep = ep;
    p.schedule = vpp > 1 ? config::Schedule::kInterleaved : config::Schedule::kOneFOneB;
    return p;
  };
  const auto folded = [](testing::PlanSpec p, int64_t expert_tp) {
    p.expert_tp = expert_tp;
    return p;
  };
  const Case cases[] = {
      {"tp+pp+dp", "megatron-1.7b", 1024, 8, 16,
       plan(2, 2, 2, 1, SequenceParallel::kNone, 0, Recompute::kFull)},
      {"tp+sp interleaved", "megatron-1.7b", 1024, 8, 8,
       plan(2, 2, 1, 1, SequenceParallel::kMegatron, 1, Recompute::kNone, 2)},
      {"ulysses zero3", "llama3-8b", 4096, 2, 8,
       plan(1, 1, 2, 4, SequenceParallel::kUlysses, 3, Recompute::kFull)},
      {"ring+tp+pp", "llama3-8b", 4096, 4, 4, plan(2, 2, 1, 4, SequenceParallel::kRing, 1, Recompute::kFull)},
      {"ulysses sp 16 over 8 kv heads", "llama3-8b", 4096, 2, 1,
       plan(1, 1, 1, 16, SequenceParallel::kUlysses, 3, Recompute::kFull)},
      {"fpdt sp 32 over 8 kv heads", "llama3-8b", 65536, 2, 1,
       plan(1, 1, 1, 32, SequenceParallel::kFpdt, 3, Recompute::kFull), 16384},
      {"ring all-gather+tp+pp full", "llama3-8b", 4096, 4, 4,
       plan(2, 2, 1, 4, SequenceParallel::kRing, 1, Recompute::kFull), 0, true, false,
       config::CpComm::kAllGather},
      {"mla ring all-gather", "deepseek-v3", 2048, 4, 8,
       plan(2, 1, 2, 2, SequenceParallel::kRing, 1, Recompute::kNone, 1, 2), 0, true, false,
       config::CpComm::kAllGather},
      {"fpdt offload", "llama3-8b", 32768, 2, 1,
       plan(1, 1, 1, 4, SequenceParallel::kFpdt, 3, Recompute::kFull), 8192},
      {"fpdt gpu", "megatron-1.7b", 16384, 2, 2,
       plan(1, 1, 1, 2, SequenceParallel::kFpdt, 2, Recompute::kNone), 4096, false},
      {"zero2 tied", "gpt-neox-125m", 1024, 2, 24,
       plan(1, 1, 4, 1, SequenceParallel::kNone, 2, Recompute::kSelective)},
      {"moe shared experts tp+sp full", "deepseek-moe-16b", 1024, 4, 16,
       plan(2, 2, 4, 1, SequenceParallel::kMegatron, 1, Recompute::kFull, 1, 2)},
      {"moe ep interleaved zero0", "mixtral-8x7b", 1024, 4, 16,
       plan(1, 2, 8, 1, SequenceParallel::kNone, 0, Recompute::kNone, 2, 8)},
      {"moe folded etp1 full", "qwen3-30b-a3b", 1024, 2, 8,
       folded(plan(2, 1, 4, 1, SequenceParallel::kMegatron, 1, Recompute::kFull, 1, 8), 1)},
      {"moe folded etp2 interleaved", "deepseek-moe-16b", 1024, 4, 8,
       folded(plan(4, 2, 2, 1, SequenceParallel::kMegatron, 1, Recompute::kNone, 2, 4), 2)},
      {"moe ring zero2", "qwen3-30b-a3b", 2048, 2, 8,
       plan(2, 1, 4, 2, SequenceParallel::kRing, 2, Recompute::kSelective, 1, 4)},
      {"mla latents tp+sp full", "deepseek-v2", 1024, 4, 16,
       plan(4, 2, 2, 1, SequenceParallel::kMegatron, 1, Recompute::kFull, 1, 2)},
      {"mla lite tp+sp", "deepseek-v2-lite", 1024, 2, 8,
       plan(2, 1, 4, 1, SequenceParallel::kMegatron, 0, Recompute::kNone, 1, 4)},
      {"mla dense plain tp full", "deepseek-v2", 1024, 4, 8,
       plan(4, 2, 1, 1, SequenceParallel::kNone, 1, Recompute::kFull), 0, true, true},
      {"mla lite dense plain tp", "deepseek-v2-lite", 1024, 2, 8,
       plan(2, 1, 4, 1, SequenceParallel::kNone, 0, Recompute::kNone), 0, true, true},
      {"mla ulysses full", "deepseek-v3", 2048, 4, 8,
       plan(1, 1, 2, 4, SequenceParallel::kUlysses, 1, Recompute::kFull, 1, 2)},
      {"mla ring+tp", "deepseek-v3", 2048, 4, 8,
       plan(2, 1, 2, 2, SequenceParallel::kRing, 1, Recompute::kNone, 1, 2)},
      {"fsdp under interleaved pp, tp+sp (torchtitan)", "megatron-1.7b", 1024, 8, 16,
       plan(2, 2, 2, 1, SequenceParallel::kMegatron, 3, Recompute::kFull, 2), 0, true, false,
       config::CpComm::kP2p, config::Framework::kTorchtitan},
      {"fsdp kept to backward, tied", "gpt-neox-125m", 1024, 2, 24,
       plan(1, 1, 4, 1, SequenceParallel::kNone, 3, Recompute::kSelective), 0, true, false,
       config::CpComm::kP2p, config::Framework::kTorchtitan, false},
      // DeepSpeed stage 3: norms and biases under the persistence threshold are never gathered.
      {"deepspeed zero3, tied", "gpt-neox-125m", 1024, 2, 24,
       plan(1, 1, 4, 1, SequenceParallel::kNone, 3, Recompute::kSelective), 0, true, false,
       config::CpComm::kP2p, config::Framework::kDeepSpeed},
      {"deepspeed zero3 ulysses", "llama3-8b", 4096, 2, 8,
       plan(1, 1, 2, 4, SequenceParallel::kUlysses, 3, Recompute::kFull), 0, true, false,
       config::CpComm::kP2p, config::Framework::kMegatronDeepSpeed},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    config::Scenario s = testing::make_scenario(c.preset, c.batch, 1, c.plan);
    s.model.seq_len = c.seq_len;
    s.model.layers = c.layers;
    if (c.chunk) s.parallelism.fpdt.chunk_tokens = c.chunk;
    s.parallelism.fpdt.offload = c.offload;
    if (c.dense) s.model.moe = {};
    s.parallelism.cp_comm = c.cp_comm;
    s.framework = c.framework;
    s.parallelism.reshard_after_forward = c.reshard_after_forward;
    const workload::ParallelPlan p = workload::make_plan(s);
    for (const workload::SymmetryClass& cls : p.symmetry_classes()) {
      std::map<Key, Totals> graph, closed;
      std::map<std::pair<Key, double>, double> graph_calls, closed_calls;  // by message size
      for (const workload::CommLogEntry& e :
           workload::comm_log(p, workload::build_rank_graph(s, p, cls.representative))) {
        const Key k{static_cast<int>(e.kind), static_cast<int>(e.group)};
        graph[k].volume += e.volume_bytes;
        graph_calls[{k, e.bytes_per_call}] += static_cast<double>(e.calls);
      }
      for (const ExpectedComm& e : expected_comm(s, cls.stage)) {
        const Key k{static_cast<int>(e.kind), static_cast<int>(e.group)};
        closed[k].volume += e.volume_bytes;
        // Bucketed data-parallel reductions have a volume but no closed-form call count.
        if (e.calls > 0) closed_calls[{k, e.bytes_per_call}] += e.calls;
      }
      ASSERT_EQ(graph.size(), closed.size()) << "stage " << cls.stage;
      for (const auto& [k, t] : graph) {
        EXPECT_NEAR(t.volume, closed[k].volume, 1e-9 * t.volume)
            << "stage " << cls.stage << ' ' << workload::to_string(static_cast<CommKind>(k.first)) << ' '
            << workload::to_string(static_cast<GroupKind>(k.second));
      }
      for (const auto& [k, calls] : closed_calls) {
        EXPECT_EQ(graph_calls[k], calls)
            << "stage " << cls.stage << ' ' << workload::to_string(static_cast<CommKind>(k.first.first))
            << ' ' << workload::to_string(static_cast<GroupKind>(k.first.second)) << " of " << k.second
            << " bytes";
      }
    }
  }
}

TEST(SeedPaperFormulas, Values) {
  EXPECT_DOUBLE_EQ(dp_allreduce_volume(1e9, 2), 4e9);
  EXPECT_DOUBLE_EQ(zero3_volume(1e9, 2) / dp_allreduce_volume(1e9, 2), 1.5);
  EXPECT_DOUBLE_EQ(tp_layer_wire_volume(1, 2048, 4096, 8, 2), 8.0 * 2048 * 4096 * 7 / 8 * 2);
  // Ulysses moves 1/P of Megatron-SP's 4Nh per layer (ground-truth.md B.4).
  EXPECT_DOUBLE_EQ(ulysses_layer_forward_volume(1, 4096, 1024, 8, 2), 4.0 * 4096 * 1024 * 2 / 8);
}

}  // namespace
}  // namespace trainsim::analytic
