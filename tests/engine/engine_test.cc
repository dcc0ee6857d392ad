// The engine's scheduling logic on an ideal (contention-free) network: pipeline bubbles, overlap of
// data-parallel communication, collapsed vs full runs, memory peaks, deadlock reports.
#include "sim/engine/engine.h"

#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "sim/config/loader.h"
#include "sim/cost/compute_model.h"
#include "sim/cost/op_cost.h"
#include "sim/engine/scenario_run.h"
#include "sim/report/breakdown.h"
#include "sim/workload/builder.h"
#include "sim/workload/memory.h"
#include "tests/config/config_test_util.h"
#include "tests/engine/ideal_transport.h"

namespace trainsim::engine {
namespace {

using trainsim::testing::ScratchDir;

// A GPT-style model of `layers` layers on `gpus` GPUs of the minimal test cluster.
config::Scenario scenario(const ScratchDir& dir, const std::string& parallelism, int layers, int global_batch,
                          int gpus) {
  trainsim::testing::write_minimal_cluster(dir);
  dir.write("s.yaml",
            "schema_version: 1\nname: s\nmodel: {layers: " + std::to_string(layers) +
                ", hidden: 1024, heads: 16, vocab: 128, seq_len: 1024}\ntraining: {global_batch: " +
                std::to_string(global_batch) + ", micro_batch: 1}\nparallelism: " + parallelism +
                "\ncluster: {topology: topo.yaml, hardware: hw.yaml, gpus: " + std::to_string(gpus) + "}\n");
  return config::load_scenario("s.yaml");
}

EngineResult simulate_scenario(const config::Scenario& s, bool full,
                               cost::IdealLinks links = {1e15, 0, 1e15, 0}, uint64_t max_events = 0) {
  const workload::ParallelPlan plan = workload::make_plan(s);
  std::vector<workload::Graph> graphs;
  std::vector<int64_t> ranks;
  if (full) {
    for (int64_t r = 0; r < plan.world_size(); ++r) {
      graphs.push_back(workload::build_rank_graph(s, plan, r));
      ranks.push_back(r);
    }
  } else {
    graphs = workload::build_class_graphs(s, plan);
    for (const workload::SymmetryClass& c : plan.symmetry_classes()) ranks.push_back(c.representative);
  }
  std::vector<const workload::Graph*> pointers;
  for (const workload::Graph& g : graphs) pointers.push_back(&g);
  WarningLog warnings;
  const cost::ComputeModel compute(s.cluster.hardware, &warnings);
  IdealTransport transport(links);
  return simulate(plan, ranks, pointers, transport, compute, EngineOptions{full, 1, max_events});
}

// What a simulation in a child process reports back: rank 0's (first simulated rank's) figures.
struct ChildRun {
  double iteration_s = -1;
  double peak_hbm_bytes = -1;
  double buffers_at_peak_bytes = -1;
};

// SimGrid allows one simulation per process: runs `body` in a child and returns what it returned
// (a trivially copyable value, sent back through a pipe).
template <typename T, typename Body>
T in_child(const Body& body) {
  int fds[2];
  EXPECT_EQ(pipe(fds), 0);
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    const T value = body();
    const ssize_t written = write(fds[1], &value, sizeof(value));
    _exit(written == sizeof(value) ? 0 : 1);
  }
  close(fds[1]);
  T value{};
  EXPECT_EQ(read(fds[0], &value, sizeof(value)), static_cast<ssize_t>(sizeof(value)));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  return value;
}

ChildRun simulate_in_child(const config::Scenario& s, bool full,
                           cost::IdealLinks links = {1e15, 0, 1e15, 0}) {
  return in_child<ChildRun>([&] {
    const EngineResult r = simulate_scenario(s, full, links);
    return ChildRun{r.iteration_time_s, r.ranks[0].peak_hbm_bytes,
                    r.ranks[0].hbm_at_peak_bytes[static_cast<size_t>(workload::MemoryCategory::kBuffers)]};
  });
}

// How many ops a simulation stopped by a budget of `max_events` reports (0 when it was not stopped).
uint64_t ops_when_stopped(const config::Scenario& s, uint64_t max_events) {
  return in_child<uint64_t>([&]() -> uint64_t {
    try {
      simulate_scenario(s, true, {50e9, 5e-6, 25e9, 5e-6}, max_events);
    } catch (const BudgetExceededError& e) {
      return e.ops_executed();
    }
    return 0;
  });
}

// Forward plus backward compute of one micro-batch on `graph` (a middle stage: uniform layers).
double per_microbatch_s(const RankRun& run, const workload::Graph& graph, int micro_batch) {
  double busy = 0;
  for (workload::OpId id = 0; id < graph.size(); ++id) {
    const workload::Op& op = graph.op(id);
    if (op.stream == workload::Stream::kCompute && op.micro_batch == micro_batch)
      busy += run.end_s[id] - run.start_s[id];
  }
  return busy;
}

// When the last backward op of `graph` ends: the pipeline flush.
double flush_end_s(const RankRun& run, const workload::Graph& graph) {
  double end = 0;
  for (workload::OpId id = 0; id < graph.size(); ++id) {
    if (graph.op(id).phase == workload::Phase::kBackward) end = std::max(end, run.end_s[id]);
  }
  return end;
}

void expect_bubble(const std::string& parallelism, int p, int v, int m) {
  ScratchDir dir;
  const config::Scenario s = scenario(dir, parallelism, 24 * p * v, m, p);
  const workload::ParallelPlan plan = workload::make_plan(s);
  const workload::Graph first = workload::build_rank_graph(s, plan, 0);
  const workload::Graph middle = workload::build_rank_graph(s, plan, 1);
  const EngineResult run = simulate_scenario(s, false);
  const double ideal = m * per_microbatch_s(run.ranks[1], middle, 0);
  const double bubble = (flush_end_s(run.ranks[0], first) - ideal) / ideal;
  EXPECT_NEAR(bubble, static_cast<double>(p - 1) / (v * m), 0.01 * (p - 1.0) / (v * m)) << parallelism;
}

// One micro-batch's forward, input-gradient and weight-gradient kernel time on `graph`'s stage.
struct PassTimes {
  double forward = 0, input_grad = 0, weight_grad = 0;
};
PassTimes pass_times(const RankRun& run, const workload::Graph& graph) {
  PassTimes t;
  for (workload::OpId id = 0; id < graph.size(); ++id) {
    const workload::Op& op = graph.op(id);
    if (!workload::compute_stream(op.stream) || op.micro_batch != 0) continue;
    const double busy = run.end_s[id] - run.launch_s[id];
    if (op.phase == workload::Phase::kForward) {
      t.forward += busy;
    } else if (op.kind == workload::OpKind::kGemm && op.gemm.pass == workload::GemmPass::kWeightGrad) {
      t.weight_grad += busy;
    } else {
      t.input_grad += busy;
    }
  }
  return t;
}

// Megatron's unfused core attention (GPT-style models): two batched GEMMs over the full score
// matrix, masked entries included, then the softmax and dropout passes over it.
TEST(Engine, UnfusedAttentionCostsItsGemmsAndScorePasses) {
  const ScratchDir dir;
  const config::Scenario s = scenario(dir, "{tp: 1}", 1, 1, 1);
  const workload::ParallelPlan plan = workload::make_plan(s);
  const workload::Graph graph = workload::build_rank_graph(s, plan, 0);
  WarningLog warnings;
  const cost::ComputeModel compute(s.cluster.hardware, &warnings);
  const std::vector<double> durations = cost::compute_durations(graph, compute);
  int checked = 0;
  for (workload::OpId id = 0; id < graph.size(); ++id) {
    const workload::Op& op = graph.op(id);
    if (op.kind != workload::OpKind::kAttentionForward && op.kind != workload::OpKind::kAttentionBackward) {
      continue;
    }
    ASSERT_FALSE(op.attention.fused);
    ASSERT_TRUE(op.attention.dropout);
    const bool forward = op.kind == workload::OpKind::kAttentionForward;
    const double scores = 16.0 * 1024 * 1024;  // heads x seq x seq
    EXPECT_DOUBLE_EQ(op.flops, (forward ? 1 : 2) * 4.0 * 16 * 1024 * 1024 * 64);
    // fp16/bf16: softmax 2 x 2 bytes (+ 2 bytes in backward), dropout 2 x 2 bytes + a 1-byte mask.
    EXPECT_DOUBLE_EQ(op.bytes, scores * ((forward ? 4 : 6) + 5));
    const double bmm_s = compute.gemm_s(16 * 1024, 1024, 64, op.dtype);
    EXPECT_DOUBLE_EQ(durations[id], (forward ? 2 : 4) * bmm_s + compute.memory_s(op.bytes));
    ++checked;
  }
  EXPECT_EQ(checked, 2);
}

// fp8 training: the linear layers' GEMMs run in fp8, each forward and input-gradient GEMM after a
// cast of its activation (or gradient) input; the LM head and attention stay bf16; the weights' fp8
// copies (row- and column-wise) are kept beside the bf16 weights.
TEST(Engine, Fp8TrainingRunsTheLinearLayersInFp8) {
  const ScratchDir dir;
  config::Scenario s = scenario(dir, "{tp: 1}", 2, 1, 1);
  s.cluster.hardware.gpu.peak_flops_per_s[config::Dtype::kFp8] = 624e12;
  s.training.dtype = config::Dtype::kFp8;
  const workload::ParallelPlan plan = workload::make_plan(s);
  const workload::Graph graph = workload::build_rank_graph(s, plan, 0);
  WarningLog warnings;
  const cost::ComputeModel compute(s.cluster.hardware, &warnings);
  const std::vector<double> durations = cost::compute_durations(graph, compute);
  int linear = 0, other = 0;
  double fp8_copies = 0;
  for (workload::OpId id = 0; id < graph.size(); ++id) {
    const workload::Op& op = graph.op(id);
    if (op.kind == workload::OpKind::kAlloc && op.label == workload::OpLabel::kModelState &&
        op.buffer.category == workload::MemoryCategory::kBuffers) {
      fp8_copies += op.bytes;
    }
    if (op.kind == workload::OpKind::kAttentionForward) {
      EXPECT_EQ(op.dtype, config::Dtype::kBf16);
    }
    if (op.kind != workload::OpKind::kGemm) continue;
    if (!workload::linear_layer(op.label)) {
      EXPECT_EQ(op.dtype, config::Dtype::kBf16) << workload::to_string(op.label);
      ++other;
      continue;
    }
    ++linear;
    ASSERT_EQ(op.dtype, config::Dtype::kFp8);
    const workload::GemmShape& g = op.gemm;
    const double cast = g.pass == workload::GemmPass::kWeightGrad
                            ? 0.0
                            : compute.memory_s(3.0 * static_cast<double>(g.m * g.k));
    EXPECT_DOUBLE_EQ(durations[id], compute.gemm_s(g.m, g.n, g.k, config::Dtype::kFp8) + cast);
  }
  EXPECT_EQ(linear, 2 * 4 * 3);  // 2 layers x (QKV, projection, FC1, FC2) x (forward, dgrad, wgrad)
  EXPECT_GT(other, 0);           // the LM head
  EXPECT_DOUBLE_EQ(fp8_copies, 2.0 * 2 * 12 * 1024 * 1024);  // 2 bytes x 2 layers x 12 h^2
}

// Megatron-Core's overlap_p2p_comm posts an interleaved step's receive with the previous step of its
// pass, so that a transfer proceeds under the other pass's compute. The interleaved order leaves the
// cycle through the stages no slack, so otherwise every transfer adds to the steady state: with
// transfers a third of a chunk's forward (70 us against about 200 us), waiting costs over 15 %,
// overlapping only the fill and drain's few percent; with free transfers the two are the same.
TEST(Engine, OverlappedPipelineReceivesHideTransfersUnderTheOtherPass) {
  const auto iteration_s = [](bool overlap, const cost::IdealLinks& links) {
    ScratchDir dir;
    const config::Scenario s =
        scenario(dir,
                 std::string("{pp: 4, vpp: 4, schedule: interleaved, overlap_p2p_comm: ") +
                     (overlap ? "true}" : "false}"),
                 16, 32, 4);
    return simulate_in_child(s, false, links).iteration_s;
  };
  const cost::IdealLinks slow{30e9, 5e-6, 1e15, 0};  // a pipeline message of 2 MiB: 70 us
  const cost::IdealLinks free{1e15, 0, 1e15, 0};
  const double free_s = iteration_s(false, free);
  const double waited_s = iteration_s(false, slow);
  const double overlapped_s = iteration_s(true, slow);
  std::cout << fmt::format("free {:.4f} s, overlapped {:.4f} s, waited {:.4f} s\n", free_s, overlapped_s,
                           waited_s);
  EXPECT_GT(waited_s, 1.15 * free_s);
  EXPECT_LT(overlapped_s, 1.05 * free_s);
  EXPECT_NEAR(iteration_s(true, free), free_s, 1e-5 * free_s);
}

TEST(Engine, OneFOneBBubbleIsPMinusOneOverM) { expect_bubble("{pp: 4}", 4, 1, 8); }

TEST(Engine, GpipeBubbleIsPMinusOneOverM) { expect_bubble("{pp: 4, schedule: gpipe}", 4, 1, 8); }

TEST(Engine, InterleavedBubbleIsPMinusOneOverVM) { expect_bubble("{pp: 4, vpp: 2}", 4, 2, 8); }

// A run of `parallelism` on p stages with m micro-batches: the pipeline bubble (first stage's flush
// after m micro-batches' work) and one micro-batch's pass times on a middle stage.
struct SplitRun {
  PassTimes t;
  double bubble_s = 0;
};
SplitRun run_split_backward(const std::string& parallelism, int p, int m) {
  ScratchDir dir;
  const config::Scenario s = scenario(dir, parallelism, 24 * p, m, p);
  const workload::ParallelPlan plan = workload::make_plan(s);
  const workload::Graph first = workload::build_rank_graph(s, plan, 0);
  const workload::Graph middle = workload::build_rank_graph(s, plan, 1);
  const EngineResult run = simulate_scenario(s, false);
  SplitRun r;
  r.t = pass_times(run.ranks[1], middle);
  r.bubble_s = flush_end_s(run.ranks[0], first) - m * (r.t.forward + r.t.input_grad + r.t.weight_grad);
  return r;
}

// Zero bubble (Qi et al. 2024, ZB-H1): the bubble shrinks from (p - 1)(F + B + W) to
// (p - 1)(F + B - W), F, B and W being one micro-batch's forward, input-gradient and weight-gradient
// passes on one stage.
TEST(Engine, ZeroBubbleBubbleIsPMinusOneTimesFPlusBMinusW) {
  const SplitRun r = run_split_backward("{pp: 4, schedule: zero-bubble}", 4, 8);
  ASSERT_GT(r.t.weight_grad, 0.1 * (r.t.forward + r.t.input_grad));
  EXPECT_NEAR(r.bubble_s, 3 * (r.t.forward + r.t.input_grad - r.t.weight_grad), 0.01 * r.bubble_s);
}

// ZB-V (Qi et al. 2024 Sec. 6): two chunks per stage in a V. Its bubble vanishes when F = B = W;
// here the input gradients outlast the forward and it is (p - 1)(B - W), F, B and W over both chunks
// of a stage: what analytic::pipeline_bubble_fraction takes for m >= 2p - 1.
TEST(Engine, ZbVBubbleIsPMinusOneTimesBMinusW) {
  const SplitRun r = run_split_backward("{pp: 4, schedule: zb-v}", 4, 8);
  ASSERT_GT(r.t.input_grad, r.t.forward);
  EXPECT_NEAR(r.bubble_s, 3 * (r.t.input_grad - r.t.weight_grad), 0.02 * r.bubble_s);
}

// DualPipeV (DeepSeek's DualPipe in a V), without communication to hide: close to DualPipe's bubble
// (PP/2 - 1)(F&B + B - 3W) of DeepSeek-V3's Table 2 taken on 2p half-stages with F&B = F + B (the
// pair's passes take turns on the GPU): (p - 1)(F + 2B - W)/2, F, B and W over both chunks of a
// stage, what analytic::pipeline_bubble_fraction takes. The simulated bubble is 8.6 % smaller for
// p = 4 (the zero-bubble W passes of the cool-down fill more than the formula counts), 2 % for p = 16.
TEST(Engine, DualPipeVBubbleIsNearDualPipes) {
  const SplitRun r = run_split_backward("{pp: 4, schedule: dualpipev}", 4, 8);
  const double dualpipe_s = 3 * (r.t.forward + 2 * r.t.input_grad - r.t.weight_grad) / 2;
  EXPECT_LT(r.bubble_s, dualpipe_s);
  EXPECT_GT(r.bubble_s, 0.9 * dualpipe_s);
}

// The union of `intervals` (begin, end), sorted and disjoint.
std::vector<std::pair<double, double>> merged(std::vector<std::pair<double, double>> intervals) {
  std::sort(intervals.begin(), intervals.end());
  std::vector<std::pair<double, double>> out;
  for (const auto& [begin, end] : intervals) {
    if (!out.empty() && begin <= out.back().second) {
      out.back().second = std::max(out.back().second, end);
    } else {
      out.emplace_back(begin, end);
    }
  }
  return out;
}

// A run of Mixtral's layers with EP4 on 8 GPUs under `parallelism` (the keys besides ep), with how long
// the first stage's expert all-to-alls ran and how much of that left its GPU without a kernel.
struct PairRun {
  double iteration_s = 0, full_iteration_s = 0;
  double all_to_all_s = 0;       // while an expert all-to-all of the first stage ran
  double idle_all_to_all_s = 0;  // ... and no kernel did
  int overlapping_kernels = 0;
};
PairRun run_mixtral_ep4(const std::string& parallelism) {
  ScratchDir dir;
  trainsim::testing::write_minimal_cluster(dir);
  dir.write("s.yaml",
            "schema_version: 1\nname: s\nmodel: {preset: mixtral-8x7b, layers: 4, seq_len: 1024}\n"
            "training: {global_batch: 48, micro_batch: 1}\nparallelism: {ep: 4, " +
                parallelism + "}\ncluster: {topology: topo.yaml, hardware: hw.yaml, gpus: 8}\n");
  const config::Scenario s = config::load_scenario("s.yaml");
  const cost::IdealLinks links{50e9, 5e-6, 25e9, 5e-6};
  PairRun out = in_child<PairRun>([&] {
    const EngineResult r = simulate_scenario(s, false, links);
    const workload::Graph graph = workload::build_rank_graph(s, workload::make_plan(s), 0);
    const RankRun& rank = r.ranks[0];
    std::vector<std::pair<double, double>> kernels, all_to_alls;
    for (workload::OpId id = 0; id < graph.size(); ++id) {
      const workload::Op& op = graph.op(id);
      if (workload::compute_stream(op.stream) && rank.end_s[id] > rank.launch_s[id]) {
        kernels.emplace_back(rank.launch_s[id], rank.end_s[id]);
      }
      if (op.label == workload::OpLabel::kEpComm) all_to_alls.emplace_back(rank.launch_s[id], rank.end_s[id]);
    }
    PairRun p{r.iteration_time_s, 0, 0, 0, 0};
    std::sort(kernels.begin(), kernels.end());
    for (size_t k = 1; k < kernels.size(); ++k)
      p.overlapping_kernels += kernels[k].first < kernels[k - 1].second;
    const auto busy = merged(kernels);
    for (const auto& [begin, end] : merged(all_to_alls)) {
      p.all_to_all_s += end - begin;
      p.idle_all_to_all_s += end - begin;
      for (const auto& [k_begin, k_end] : busy) {
        p.idle_all_to_all_s -= std::max(0.0, std::min(end, k_end) - std::max(begin, k_begin));
      }
    }
    return p;
  });
  out.full_iteration_s = simulate_in_child(s, true, links).iteration_s;
  return out;
}

// DualPipeV against ZB-V (the same V and split backward, no overlap): the pairs' two lanes never run
// kernels at once, yet the expert all-to-alls of each pass run under the other pass's kernels, so far
// fewer of their seconds leave the GPU idle and the iteration is shorter; a collapsed run equals the
// full one.
TEST(Engine, DualPipeVHidesTheAllToAllsOfAPairBehindItsOtherPass) {
  const PairRun zb_v = run_mixtral_ep4("pp: 2, dp: 4, schedule: zb-v");
  const PairRun dualpipe_v = run_mixtral_ep4("pp: 2, dp: 4, schedule: dualpipev");
  EXPECT_EQ(dualpipe_v.overlapping_kernels, 0);
  EXPECT_GT(zb_v.idle_all_to_all_s, 0.9 * zb_v.all_to_all_s);
  EXPECT_LT(dualpipe_v.idle_all_to_all_s, 0.5 * zb_v.idle_all_to_all_s);
  EXPECT_LT(dualpipe_v.iteration_s, zb_v.iteration_s);
  EXPECT_DOUBLE_EQ(dualpipe_v.full_iteration_s, dualpipe_v.iteration_s);
}

// Megatron-Core's combined 1F1B (ep_comm_overlap) on the interleaved schedule and on one stage: the
// steady state's forward-backward pairs hide most all-to-all time that plain 1F1B leaves idle.
TEST(Engine, EpCommOverlapHidesTheAllToAllsOf1F1B) {
  for (const std::string plan : {"pp: 2, dp: 4, vpp: 2, schedule: interleaved", "pp: 1, dp: 8"}) {
    const PairRun plain = run_mixtral_ep4(plan);
    const PairRun paired = run_mixtral_ep4(plan + ", ep_comm_overlap: true");
    EXPECT_EQ(paired.overlapping_kernels, 0) << plan;
    EXPECT_GT(plain.idle_all_to_all_s, 0.9 * plain.all_to_all_s) << plan;
    EXPECT_LT(paired.idle_all_to_all_s, 0.5 * plain.idle_all_to_all_s) << plan;
    EXPECT_LT(paired.iteration_s, plain.iteration_s) << plan;
    EXPECT_DOUBLE_EQ(paired.full_iteration_s, paired.iteration_s) << plan;
  }
}

TEST(Engine, CollapsedAndFullRunsAgree) {
  ScratchDir dir;
  const config::Scenario s = scenario(dir, "{tp: 2, pp: 2, dp: 2}", 8, 8, 8);
  const cost::IdealLinks links{50e9, 5e-6, 25e9, 5e-6};
  const ChildRun collapsed = simulate_in_child(s, false, links);
  const ChildRun full = simulate_in_child(s, true, links);
  EXPECT_GT(collapsed.iteration_s, 0);
  EXPECT_DOUBLE_EQ(collapsed.iteration_s, full.iteration_s);
  EXPECT_DOUBLE_EQ(collapsed.peak_hbm_bytes, full.peak_hbm_bytes);
}

// A GPU at half speed: its kernels take twice as long, its pipeline stage slows down, and the
// collapsed run (the stage at its slowest member's speed) agrees with the full run (every GPU at its
// own speed) to within the lockstep approximation.
TEST(Engine, StragglerSlowsItsStageAndCollapsedAgreesWithFull) {
  ScratchDir dir;
  config::Scenario s = scenario(dir, "{tp: 2, pp: 2, dp: 2}", 8, 8, 8);
  struct Outcome {
    double iteration_s = 0;
    double gemm_ratio = 0;  // first GEMM's duration on rank 5 over rank 4's (full runs)
  };
  const auto run = [&](bool full) {
    return in_child<Outcome>([&] {
      RunOptions options;
      options.engine.full = full;
      options.network = NetworkModel::kIdeal;
      const std::unique_ptr<ScenarioRun> r = run_scenario(s, options);
      Outcome out{r->result.iteration_time_s, 0};
      if (full) {
        const workload::Graph& g = r->graph(4);
        for (workload::OpId id = 0; id < g.size(); ++id) {
          if (g.op(id).kind != workload::OpKind::kGemm) continue;
          const auto duration = [&](int rank) {
            return r->result.ranks[rank].end_s[id] - r->result.ranks[rank].start_s[id];
          };
          out.gemm_ratio = duration(5) / duration(4);
          break;
        }
      }
      return out;
    });
  };
  const double nominal_s = run(false).iteration_s;
  s.stragglers.slow_gpus = {{.ranks = {5}, .nodes = {}, .speed = 0.5}};  // tp 1, dp 0, stage 1
  const double collapsed_s = run(false).iteration_s;
  const Outcome full = run(true);
  EXPECT_NEAR(full.gemm_ratio, 2.0, 1e-9);
  EXPECT_GT(collapsed_s, 1.4 * nominal_s);
  EXPECT_NEAR(full.iteration_s, collapsed_s, 0.01 * collapsed_s);
}

// A node with slow NICs outside the representatives' replica: the collapsed run simulates that
// node's replica instead, so its pipeline sends cross the slow NICs as in the full run.
TEST(Engine, SlowNicsOfAnotherReplicaSlowTheCollapsedRunAsTheFullOne) {
  ScratchDir dir;
  // TP8 x DP2 x PP2 on 4 nodes of 8: node 1 is data-parallel replica 1 of stage 0.
  config::Scenario s = scenario(dir, "{tp: 8, pp: 2, dp: 2}", 8, 8, 32);
  const auto run = [&](bool full) {
    return in_child<double>([&] {
      RunOptions options;
      options.engine.full = full;
      options.network = NetworkModel::kIdeal;
      return run_scenario(s, options)->result.iteration_time_s;
    });
  };
  const double nominal_s = run(false);
  s.stragglers.slow_nics = {{.nodes = {1}, .bandwidth_bytes_per_s = 1e9}};
  const double collapsed_s = run(false);
  EXPECT_GT(collapsed_s, 1.01 * nominal_s);
  EXPECT_NEAR(run(true), collapsed_s, 1e-9 * collapsed_s);
}

// A budget of n ops stops the simulation after exactly n, also where the ranks of a collective finish
// it at the same instant (each finish wakes the waiting streams, a simcall that lets other actors run
// first).
TEST(Engine, MaxEventsStopsAfterExactlyThatManyOps) {
  ScratchDir dir;
  const config::Scenario s = scenario(dir, "{tp: 2, dp: 2}", 4, 4, 4);
  for (const uint64_t budget : {1, 37, 200, 201, 202, 203}) {
    EXPECT_EQ(ops_when_stopped(s, budget), budget);
  }
}

// Data-parallel gradient all-reduces on their own stream overlap the backward pass: with enough
// bandwidth only the last bucket is exposed; with little, the chain of all-reduces (each starts when
// its bucket is ready and the previous one is done) ends after the backward, and the exposed time is
// exactly that chain's end minus the end of the backward, computed here by hand from the formula.
double exposed_dp_comm(double bandwidth, double* hand_computed) {
  ScratchDir dir;
  const config::Scenario s = scenario(dir, "{dp: 2, dp_bucket: 16MiB}", 8, 2, 2);
  const workload::ParallelPlan plan = workload::make_plan(s);
  const workload::Graph graph = workload::build_rank_graph(s, plan, 0);
  const cost::IdealLinks links{bandwidth, 10e-6, 1e15, 0};
  const EngineResult run = simulate_scenario(s, false, links);
  const RankRun& rr = run.ranks[0];
  double chain_end = 0;
  double backward_end = 0;
  for (workload::OpId id = 0; id < graph.size(); ++id) {
    const workload::Op& op = graph.op(id);
    if (op.stream == workload::Stream::kCompute && op.phase == workload::Phase::kBackward) {
      backward_end = std::max(backward_end, rr.end_s[id]);
    }
    if (op.kind != workload::OpKind::kCollective || op.stream != workload::Stream::kDpComm) continue;
    double ready = 0;
    for (const workload::OpId pred : graph.predecessors(id)) {
      if (graph.op(pred).stream != workload::Stream::kDpComm) ready = std::max(ready, rr.end_s[pred]);
    }
    chain_end = std::max(ready, chain_end) + cost::collective_s(op.collective.kind, 2, op.bytes, links);
  }
  *hand_computed = std::max(0.0, chain_end - backward_end);
  const double start = run.total_time_s - run.iteration_time_s;
  const report::Breakdown b = report::attribute_time(graph, rr, start, run.total_time_s);
  // All of it behind the data-parallel all-reduces, as the breakdown by collective says.
  double by_collective = 0;
  for (const auto& [collective, seconds] : b.exposed_comm_by_collective_s) {
    EXPECT_EQ(collective, "all_reduce dp");
    by_collective += seconds;
  }
  EXPECT_NEAR(by_collective, b.exposed_comm_s, 1e-12);
  return b.exposed_comm_s;
}

TEST(Engine, DataParallelAllReduceHiddenWhenBandwidthSuffices) {
  double hand = 0;
  const double exposed = exposed_dp_comm(1e12, &hand);
  EXPECT_NEAR(exposed, hand, 1e-9);
  EXPECT_LT(exposed, 1e-3);
}

TEST(Engine, DataParallelAllReduceExposedWhenBandwidthLacks) {
  double hand = 0;
  const double exposed = exposed_dp_comm(1e9, &hand);
  EXPECT_GT(hand, 0.01);
  EXPECT_NEAR(exposed, hand, 1e-9 * hand);
}

// On the timeline the engine reaches the peak the graph's allocation order implies (whose parts equal
// the closed forms of Korthikanti and ZeRO: tests/analytic, tests/workload): exactly without
// pipelining; within 0.1 % with it, since a receive buffer is allocated when the receive starts on
// the device rather than when the host issues it.
void expect_engine_peak_equals_graph_peak(const char* shipped) {
  const config::Scenario s = config::load_scenario(trainsim::testing::source_dir() / "scenarios" / shipped);
  const workload::ParallelPlan plan = workload::make_plan(s);
  const EngineResult run = simulate_scenario(s, false, {100e9, 5e-6, 25e9, 5e-6});
  const std::vector<workload::Graph> graphs = workload::build_class_graphs(s, plan);
  ASSERT_EQ(graphs.size(), run.ranks.size());
  for (size_t i = 0; i < graphs.size(); ++i) {
    const workload::MemoryTimeline timeline = workload::memory_timeline(graphs[i]);
    const double tolerance = plan.degree(workload::Axis::kPp) > 1 ? 1e-3 : 1e-9;
    EXPECT_NEAR(run.ranks[i].peak_hbm_bytes, timeline.peak_hbm_bytes, tolerance * timeline.peak_hbm_bytes)
        << shipped << " class " << i;
  }
}

TEST(Engine, PeakMemoryOfKorthikanti22B) { expect_engine_peak_equals_graph_peak("02-megatron-22b-tp8.yaml"); }

TEST(Engine, PeakMemoryOfKorthikanti175B) {
  expect_engine_peak_equals_graph_peak("03-gpt3-175b-64xa100.yaml");
}

// ZeRO-3 prefetches one use ahead, and the communication stream must not run ahead of the compute:
// with an infinitely fast network every layer's all-gather could start at once, yet only the use in
// progress and the prefetched one hold gathered parameters, so the buffers at the peak do not grow
// with the number of layers.
TEST(Engine, ZeroStage3GatheredParametersDoNotGrowWithLayers) {
  const auto buffers_at_peak = [](int layers) {
    ScratchDir dir;
    const config::Scenario s = scenario(dir, "{dp: 2, zero_stage: 3, recompute: full}", layers, 2, 2);
    return simulate_in_child(s, false).buffers_at_peak_bytes;
  };
  const double layer_bf16_bytes = 12 * 1024.0 * 1024.0 * 2;  // QKV, projection and MLP weights
  const double few = buffers_at_peak(8);
  const double many = buffers_at_peak(24);
  EXPECT_GT(few, 2 * layer_bf16_bytes);
  EXPECT_NEAR(many, few, 0.01 * few) << "gathered parameters of " << (many - few) / layer_bf16_bytes
                                     << " more layers live at the peak with 16 more layers";
}

TEST(Engine, MemoryPeakIsPositiveAndEverythingIsFreed) {
  ScratchDir dir;
  const config::Scenario s = scenario(dir, "{}", 4, 2, 1);
  const EngineResult run = simulate_scenario(s, false);
  ASSERT_EQ(run.ranks.size(), 1u);
  EXPECT_GT(run.ranks[0].peak_hbm_bytes, 0);
  EXPECT_DOUBLE_EQ(run.ranks[0].hbm_samples.back().second, 0.0);
}

}  // namespace
}  // namespace trainsim::engine

namespace trainsim::engine {
namespace {

// A host that takes longer to issue each kernel than the kernel runs leaves the GPU idle between
// them; a host synchronisation holds it until the GPU has caught up (cost/rank_schedule.h).
TEST(Engine, AHostSlowerThanItsKernelsLeavesTheGpuIdle) {
  const ScratchDir dir;
  const workload::ParallelPlan plan = workload::make_plan(scenario(dir, "{dp: 1}", 1, 1, 1));
  workload::Graph g;
  workload::Op kernel;
  kernel.kind = workload::OpKind::kMemory;
  kernel.bytes = 1e6;  // 1 us at 1 TB/s
  workload::OpId last = g.add(kernel, {});
  for (int i = 1; i < 100; ++i) last = g.add(kernel, std::vector<workload::OpId>{last});
  workload::Op sync;
  sync.kind = workload::OpKind::kHostSync;
  sync.label = workload::OpLabel::kHostSync;  // an offload loop's (its wait is offload stall)
  last = g.add(sync, std::vector<workload::OpId>{last});
  workload::Op after = kernel;
  after.bytes = 100e6;  // 100 us, issued only once the synchronisation has returned
  g.add(after, std::vector<workload::OpId>{last});
  config::HardwareProfile profile;
  profile.gpu.hbm_bandwidth_bytes_per_s = 1e12;
  profile.compute.memory_efficiency = 1;
  profile.compute.host_sync_s = 5e-6;
  profile.stack.emplace().parameters[config::StackParameter::kHostDispatch] = 10e-6;
  struct Outcome {
    double iteration_s, compute_s, idle_s, offload_stall_s;
  };
  const Outcome r = in_child<Outcome>([&] {
    WarningLog warnings;
    const cost::ComputeModel model(profile, &warnings);
    IdealTransport transport(cost::IdealLinks{});
    const EngineResult run = simulate(plan, {0}, {&g}, transport, model, EngineOptions{true, 1});
    const report::Breakdown b = report::attribute_time(g, run.ranks[0], 0, run.iteration_time_s);
    return Outcome{run.iteration_time_s, b.compute_s, b.idle_s, b.offload_stall_s};
  });
  // 100 kernels issued 10 us apart (the last ends 1 us after its issue); the synchronisation, issued
  // 10 us after the last kernel and lasting 5 us; then the last kernel's dispatch and its 100 us.
  EXPECT_NEAR(r.iteration_s, 100 * 10e-6 + 1e-6 + 9e-6 + 5e-6 + 10e-6 + 100e-6, 1e-9);
  EXPECT_NEAR(r.compute_s, 100 * 1e-6 + 100e-6, 1e-9);
  EXPECT_NEAR(r.offload_stall_s, 5e-6, 1e-9);  // the synchronisation, as the breakdown counts it
  EXPECT_NEAR(r.idle_s, r.iteration_s - r.compute_s - r.offload_stall_s, 1e-9);
}

}  // namespace
}  // namespace trainsim::engine
