// The closed-form iteration time against the simulator (contention-free network, so both see the
// same alpha-beta links and only the event-level scheduling differs) and its direction under plan
// changes.
#include "sim/estimate/iteration_time.h"

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include "sim/common/isolated.h"
#include "sim/config/loader.h"
#include "sim/engine/scenario_run.h"
#include "sim/report/run_report.h"
#include "sim/workload/builder.h"
#include "sim/workload/summary.h"

namespace trainsim::estimate {
namespace {

config::Scenario load(const std::string& name, const std::vector<std::string>& sets = {}) {
  std::vector<config::Override> overrides;
  for (const std::string& s : sets) overrides.push_back(config::parse_override(s));
  return config::load_scenario(std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/" + name, overrides);
}

IterationTimeEstimate estimate(const config::Scenario& scenario) {
  WarningLog warnings;
  return estimate_iteration_time(scenario, &warnings);
}

struct Case {
  std::string file;
  std::vector<std::string> sets;
};

// Shipped scenarios small enough to simulate in a test (05 at a shorter sequence: the same FPDT
// loop with fewer chunks).
const std::vector<Case> kCases = {
    {"00-gpt3-125m-1gpu.yaml", {}},
    {"01-gpt3-1.3b-dp8.yaml", {}},
    {"02-megatron-22b-tp8.yaml", {}},
    {"04-llama3-8b-ulysses-8xh100.yaml", {}},
    {"05-llama3-8b-fpdt-2m-4xa100.yaml", {"model.seq_len=256Ki"}},
    {"06-llama3-70b-256xh100.yaml", {}},
    {"01-gpt3-1.3b-dp8.yaml", {"parallelism.pp=4", "parallelism.dp=2"}},
    {"01-gpt3-1.3b-dp8.yaml", {"parallelism.pp=2", "parallelism.dp=4", "parallelism.schedule=gpipe"}},
    {"01-gpt3-1.3b-dp8.yaml",
     {"parallelism={tp: 2, pp: 2, dp: 2, vpp: 3, schedule: interleaved, zero_stage: 1}"}},
    {"06-llama3-70b-256xh100.yaml", {"parallelism={vpp: 1, schedule: 1f1b}", "training.global_batch=64"}},
    {"04-llama3-8b-ulysses-8xh100.yaml", {"parallelism.sequence_parallel=ring"}},
    {"01-gpt3-1.3b-dp8.yaml", {"parallelism.zero_stage=3", "parallelism.recompute=full"}},
    // FSDP as torchtitan runs it: parameters kept from forward to backward, and under pipelining.
    {"01-gpt3-1.3b-dp8.yaml",
     {"framework=torchtitan", "parallelism.zero_stage=3", "parallelism.reshard_after_forward=false"}},
    {"01-gpt3-1.3b-dp8.yaml",
     {"framework=torchtitan", "parallelism={pp: 2, dp: 4, zero_stage: 3, recompute: full}"}},
    {"06-llama3-70b-256xh100.yaml", {"stragglers.slow_nics=[{nodes: [1], bandwidth: 100Gbps}]"}},
    // DualPipeV's overlapped pairs: expert all-to-alls and TP + SP collectives under the other pass.
    {"11-deepseek-v2-lite-16xh100.yaml",
     {"parallelism={pp: 2, dp: 8, ep: 8, uneven_stages: true, schedule: dualpipev}",
      "training.global_batch=128"}},
    {"01-gpt3-1.3b-dp8.yaml",
     {"parallelism={tp: 2, pp: 2, dp: 2, sequence_parallel: megatron, schedule: dualpipev}"}},
    // Megatron-Core's combined 1F1B (ep_comm_overlap): interleaved with a global batch whose
    // micro-batches the estimate extrapolates to, and on one stage.
    {"11-deepseek-v2-lite-16xh100.yaml",
     {"parallelism={pp: 2, vpp: 2, dp: 8, ep: 8, uneven_stages: true, schedule: interleaved, "
      "ep_comm_overlap: true}",
      "training.global_batch=256"}},
    {"11-deepseek-v2-lite-16xh100.yaml",
     {"parallelism={pp: 1, dp: 16, ep: 8, ep_comm_overlap: true}", "training.global_batch=128"}},
    // DualPipeV at its minimum of 2pp micro-batches: no count below it to extrapolate from.
    {"01-gpt3-1.3b-dp8.yaml",
     {"parallelism={tp: 2, pp: 2, dp: 2, schedule: dualpipev}", "training.global_batch=32"}},
    // A host slower than the kernels of a small model (a stack's dispatch time), with pipelining.
    {"01-gpt3-1.3b-dp8.yaml",
     {"parallelism.pp=2", "parallelism.dp=4", "training.micro_batch=1", "model.seq_len=512",
      "cluster.hardware_set={stack: {framework: what-if, parameters: {host_dispatch: 60us}}}"}},
    // The same under DeepSpeed, whose host synchronises the device before each micro-batch's forward.
    {"01-gpt3-1.3b-dp8.yaml",
     {"framework=megatron-deepspeed", "parallelism.pp=2", "parallelism.dp=4", "training.micro_batch=1",
      "model.seq_len=512",
      "cluster.hardware_set={stack: {framework: what-if, parameters: {host_dispatch: 60us}}}"}},
    // A host that waits for each MoE layer's token counts before dispatching it.
    {"11-deepseek-v2-lite-16xh100.yaml",
     {"parallelism={pp: 1, dp: 16, ep: 8, moe_host_sync: true}", "training.global_batch=64",
      "cluster.hardware_set={stack: {framework: what-if, parameters: {host_dispatch: 30us}}}"}},
    // A slow GPU in stage 2, a middle stage the estimate builds only because of it.
    {"01-gpt3-1.3b-dp8.yaml",
     {"parallelism.pp=4", "parallelism.dp=2", "stragglers.slow_gpus=[{ranks: [5], speed: 0.7}]"}},
};

// Iteration time within this fraction of the simulation's, for every case above.
constexpr double kTimeTolerance = 0.10;
// Peak HBM within this fraction (the estimate walks allocations in issue order; the engine tracks
// them as the streams run them).
constexpr double kMemoryTolerance = 0.05;

TEST(IterationTime, AgreesWithTheSimulatorOnShippedScenarios) {
  std::vector<nlohmann::json> simulated(kCases.size());
  run_isolated(
      kCases.size(), {2, 120},
      [](size_t i) {
        const config::Scenario s = load(kCases[i].file, kCases[i].sets);
        engine::RunOptions options;
        options.network = engine::NetworkModel::kIdeal;
        const auto run = engine::run_scenario(s, options);
        return to_json(report::make_run_report(s, *run, {"", "ideal", false, 1}));
      },
      [&](size_t i, IsolatedResult r) {
        ASSERT_TRUE(r.ok) << kCases[i].file << ": " << r.error;
        simulated[i] = std::move(r.value);
      });
  for (size_t i = 0; i < kCases.size(); ++i) {
    SCOPED_TRACE(kCases[i].file);
    const config::Scenario scenario = load(kCases[i].file, kCases[i].sets);
    const IterationTimeEstimate e = estimate(scenario);
    const nlohmann::json& sim = simulated[i];
    const nlohmann::json& b = sim["breakdown"];
    const double t = sim["iteration_time_s"].get<double>();
    std::cout << fmt::format(
        "{:<36.36} sim {:10.4f} est {:10.4f} ({:+6.1f}%) | compute {:.4f}/{:.4f} comm {:.4f}/{:.4f} "
        "bubble {:.4f}/{:.4f} offload {:.4f}/{:.4f} idle {:.4f} | hbm {:.2f}/{:.2f} GiB\n",
        kCases[i].file + fmt::format("{}", fmt::join(kCases[i].sets, " ")), t, e.iteration_s,
        100 * (e.iteration_s - t) / t, b["compute_s"].get<double>(), e.breakdown.compute_s,
        b["exposed_comm_s"].get<double>(), e.breakdown.exposed_comm_s, b["bubble_s"].get<double>(),
        e.breakdown.bubble_s, b["offload_stall_s"].get<double>(), e.breakdown.offload_stall_s,
        b["idle_s"].get<double>(), sim["memory"]["peak_hbm_bytes"].get<double>() / (1 << 30),
        e.peak_hbm_bytes / (1 << 30));
    EXPECT_NEAR(e.iteration_s, t, kTimeTolerance * t);
    // One stage: nothing waits for another stage, and the estimate times the simulated rank's own ops
    // as the engine does (a kernel issued with a collective overlaps it, whatever the graph order).
    if (scenario.parallelism.pp == 1) {
      EXPECT_NEAR(e.iteration_s, t, 1e-4 * t);
      EXPECT_NEAR(e.breakdown.outside_layers_s, sim["compute_outside_layers_s"].get<double>(), 1e-4 * t);
    }
    EXPECT_NEAR(e.peak_hbm_bytes, sim["memory"]["peak_hbm_bytes"].get<double>(),
                kMemoryTolerance * sim["memory"]["peak_hbm_bytes"].get<double>());
    EXPECT_EQ(e.fits, sim["memory"]["fits"].get<bool>());
    EXPECT_NEAR(e.mfu, sim["mfu"].get<double>(), kTimeTolerance * sim["mfu"].get<double>());
  }
}

// The kernel-time lower bound that orders search's estimates: never above the estimate, on every shipped
// scenario (pipelines, FPDT's offloads, experts, DualPipeV's two lanes), and close to it where kernels
// fill the iteration (one stage, little exposed communication).
TEST(IterationTime, LowerBoundNeverExceedsTheEstimate) {
  for (const Case& c : kCases) {
    SCOPED_TRACE(c.file + fmt::format(" {}", fmt::join(c.sets, " ")));
    const config::Scenario scenario = load(c.file, c.sets);
    const double bound_s = iteration_lower_bound_s(scenario);
    const double estimate_s = estimate(scenario).iteration_s;
    EXPECT_GT(bound_s, 0);
    EXPECT_LE(bound_s, estimate_s * (1 + 1e-12));
  }
  const config::Scenario single_gpu = load("00-gpt3-125m-1gpu.yaml");
  EXPECT_NEAR(iteration_lower_bound_s(single_gpu), estimate(single_gpu).iteration_s,
              1e-9 * estimate(single_gpu).iteration_s);
}

TEST(IterationTime, FlopsFollowTheRunReport) {
  // 02 splits GPT's 50257-token vocabulary over 8 TP ranks (padded rows count, as in the graphs);
  // 03 recomputes selectively, 05 fully and with FPDT's chunked recomputation.
  for (const Case& c : std::vector<Case>{{"01-gpt3-1.3b-dp8.yaml", {}},
                                         {"02-megatron-22b-tp8.yaml", {}},
                                         {"03-gpt3-175b-64xa100.yaml", {}},
                                         {"05-llama3-8b-fpdt-2m-4xa100.yaml", {"model.seq_len=256Ki"}},
                                         {"06-llama3-70b-256xh100.yaml", {}}}) {
    SCOPED_TRACE(c.file);
    const config::Scenario s = load(c.file, c.sets);
    const workload::ParallelPlan plan = workload::make_plan(s);
    const workload::WorkloadSummary summary =
        workload::summarize(s, plan, workload::build_class_graphs(s, plan));
    const IterationTimeEstimate e = estimate(s);
    EXPECT_NEAR(e.model_flops, summary.iteration.model, 1e-9 * summary.iteration.model);
    EXPECT_NEAR(e.hardware_flops, summary.iteration.hardware, 1e-9 * summary.iteration.hardware);
    EXPECT_NEAR(e.executed_flops, summary.iteration.executed, 1e-9 * summary.iteration.executed);
  }
}

TEST(IterationTime, SplitAddsUpAndMfuFollowsFromIt) {
  const config::Scenario s = load("06-llama3-70b-256xh100.yaml");
  const IterationTimeEstimate e = estimate(s);
  EXPECT_NEAR(e.iteration_s, e.breakdown.total_s(), 1e-9 * e.iteration_s);
  EXPECT_NEAR(e.tokens_per_s, 512.0 * 8192 / e.iteration_s, 1e-6 * e.tokens_per_s);
  EXPECT_NEAR(e.mfu, e.model_flops / (e.iteration_s * 256 * 989e12), 1e-3 * e.mfu);
}

// What search's screening asks for (time and memory, no breakdown) is the full estimate's.
TEST(IterationTime, TimeAndMemoryAloneAreTheFullEstimates) {
  for (const char* file :
       {"03-gpt3-175b-64xa100.yaml", "06-llama3-70b-256xh100.yaml", "11-deepseek-v2-lite-16xh100.yaml"}) {
    SCOPED_TRACE(file);
    const config::Scenario s = load(file);
    WarningLog warnings;
    const IterationTimeEstimate full = estimate_iteration_time(s, &warnings);
    const IterationTimeEstimate lean = estimate_iteration_time(s, &warnings, EstimateDetail::kTimeAndMemory);
    EXPECT_EQ(lean.iteration_s, full.iteration_s);
    EXPECT_EQ(lean.peak_hbm_bytes, full.peak_hbm_bytes);
    EXPECT_EQ(lean.peak_host_bytes_per_node, full.peak_host_bytes_per_node);
    EXPECT_EQ(lean.fits, full.fits);
    EXPECT_GT(full.breakdown.compute_s, 0);
    EXPECT_EQ(lean.breakdown.compute_s, 0);
  }
}

TEST(IterationTime, MoreTensorParallelismMeansLessComputeAndMoreCommunicationPerGpu) {
  // GPT-3 1.3B on 8 GPUs: tp 2 x dp 4 against tp 8 x dp 1, same batch.
  const IterationTimeEstimate tp2 =
      estimate(load("01-gpt3-1.3b-dp8.yaml", {"parallelism.tp=2", "parallelism.dp=4"}));
  const IterationTimeEstimate tp8 =
      estimate(load("01-gpt3-1.3b-dp8.yaml", {"parallelism.tp=8", "parallelism.dp=1"}));
  EXPECT_GT(tp8.breakdown.exposed_comm_s, tp2.breakdown.exposed_comm_s);
  EXPECT_LT(tp8.peak_hbm_bytes, tp2.peak_hbm_bytes);
}

TEST(IterationTime, DeeperPipelinesHaveMoreBubbleAndMoreMicroBatchesLess) {
  const auto with = [](int pp, int global_batch) {
    return estimate(load("01-gpt3-1.3b-dp8.yaml",
                         {fmt::format("parallelism.pp={}", pp), fmt::format("parallelism.dp={}", 8 / pp),
                          fmt::format("training.global_batch={}", global_batch)}));
  };
  const IterationTimeEstimate pp1 = with(1, 64), pp2 = with(2, 64), pp4 = with(4, 64);
  EXPECT_EQ(pp1.breakdown.bubble_s, 0);
  EXPECT_GT(pp2.breakdown.bubble_s, 0);
  EXPECT_GT(pp4.breakdown.bubble_s / pp4.iteration_s, pp2.breakdown.bubble_s / pp2.iteration_s);
  const IterationTimeEstimate pp4_more = with(4, 256);
  EXPECT_LT(pp4_more.breakdown.bubble_s / pp4_more.iteration_s, pp4.breakdown.bubble_s / pp4.iteration_s);
  EXPECT_GT(pp4_more.iteration_s, pp4.iteration_s);
}

TEST(IterationTime, LargerMicroBatchesRaiseMemory) {
  const IterationTimeEstimate mb1 = estimate(load("01-gpt3-1.3b-dp8.yaml", {"training.micro_batch=1"}));
  const IterationTimeEstimate mb8 = estimate(load("01-gpt3-1.3b-dp8.yaml", {"training.micro_batch=8"}));
  EXPECT_GT(mb8.peak_hbm_bytes, mb1.peak_hbm_bytes);
  // Bigger GEMMs run closer to peak and fewer micro-batches mean fewer launches: not slower.
  EXPECT_LE(mb8.breakdown.compute_s, mb1.breakdown.compute_s * 1.001);
}

// The straggler sweep's claim (scenarios/sweeps/gpt3-175b-1024xa100-stragglers.yaml): on 1,024 GPUs a
// 1 % speed spread puts the slowest GPU near 97 %, and the synchronous iteration loses nearly that.
TEST(IterationTime, ASpeedSpreadCostsAboutWhatTheSlowestGpuLoses) {
  const IterationTimeEstimate nominal = estimate(load("07-gpt3-175b-1024xa100.yaml"));
  const IterationTimeEstimate spread =
      estimate(load("07-gpt3-175b-1024xa100.yaml", {"stragglers.speed_spread={stddev: 0.01, seed: 1}"}));
  const double slowdown = spread.iteration_s / nominal.iteration_s;
  EXPECT_GT(slowdown, 1.02);
  EXPECT_LT(slowdown, 1 / 0.97);  // kernels at most 1/0.97 as long; communication unchanged
  EXPECT_DOUBLE_EQ(spread.peak_hbm_bytes, nominal.peak_hbm_bytes);
}

// The schedule sweep's claim (scenarios/sweeps/gpt3-175b-pipeline-schedules.yaml): zero bubble beats
// 1F1B (and with chunks, interleaved 1F1B) at every micro-batch count, by more when there are few, at
// the same peak memory within 0.1 % (selective recompute).
TEST(IterationTime, ZeroBubbleBeatsOneFOneBMostWithFewMicroBatches) {
  const auto run = [](const char* schedule, int vpp, int micro_batches) {
    return estimate(
        load("03-gpt3-175b-64xa100.yaml",
             {fmt::format("parallelism.schedule={}", schedule), fmt::format("parallelism.vpp={}", vpp),
              fmt::format("training.global_batch={}", micro_batches)}));
  };
  double previous_ratio = 1;
  for (const int m : {128, 32, 8}) {
    const IterationTimeEstimate one_f_one_b = run("1f1b", 1, m);
    const IterationTimeEstimate zero_bubble = run("zero-bubble", 1, m);
    const double ratio = zero_bubble.iteration_s / one_f_one_b.iteration_s;
    EXPECT_LT(ratio, previous_ratio) << m << " micro-batches";
    previous_ratio = ratio;
    EXPECT_NEAR(zero_bubble.peak_hbm_bytes, one_f_one_b.peak_hbm_bytes, 1e-3 * one_f_one_b.peak_hbm_bytes);
    EXPECT_LT(run("zero-bubble", 3, m).iteration_s, run("interleaved", 3, m).iteration_s) << m;
  }
}

// The expert-parallelism sweep's claim (scenarios/sweeps/mixtral-8x7b-expert-parallelism.yaml):
// spreading Mixtral's experts over more data-parallel ranks lowers the peak memory (with EP 1 the
// plan does not fit 80 GiB), and an expert group waiting for a rank with 1.25x the mean load loses
// less than 25 % (only the experts' GEMMs and all-to-alls stretch) but more than 10 % (they are
// most of the iteration).
TEST(IterationTime, ExpertParallelismSavesMemoryAndImbalanceStretchesTheExperts) {
  const auto run = [](int ep, double capacity) {
    return estimate(
        load("10-mixtral-8x7b-64xh100.yaml",
             {fmt::format("parallelism.ep={}", ep), fmt::format("model.moe.capacity_factor={}", capacity)}));
  };
  EXPECT_FALSE(run(1, 1).fits);
  double previous = run(1, 1).peak_hbm_bytes;
  for (const int ep : {2, 4, 8}) {
    const IterationTimeEstimate balanced = run(ep, 1);
    EXPECT_TRUE(balanced.fits) << ep;
    EXPECT_LT(balanced.peak_hbm_bytes, previous) << ep;
    previous = balanced.peak_hbm_bytes;
    const double slowdown = run(ep, 1.25).iteration_s / balanced.iteration_s;
    EXPECT_GT(slowdown, 1.10) << ep;
    EXPECT_LT(slowdown, 1.25) << ep;
  }
}

// The ZeRO-3 scaling sweep's claim (scenarios/sweeps/llama3-8b-zero3-scale-h100.yaml): at a fixed
// batch, data parallelism with ZeRO-3 alone stops scaling near 4,096 H100s. Every layer's gather and
// reduce-scatter spans all GPUs, and a ring over N ranks pays 2(N-1) of NCCL's protocol steps: on
// 16x the GPUs of 256 the iteration takes more than twice its ideal sixteenth, and communication that
// hides under compute on 64 GPUs is most of the iteration on 4,096.
TEST(IterationTime, ZeroThreeAloneStopsScalingAtThousandsOfGpus) {
  const auto run = [](int gpus) {
    return estimate(
        load("04-llama3-8b-ulysses-8xh100.yaml",
             {"model.seq_len=4Ki", "training.global_batch=4096", "parallelism.sp=1",
              "parallelism.sequence_parallel=none", "parallelism.recompute=none",
              std::string("cluster.topology=") + TRAINSIM_SOURCE_DIR + "/topologies/h100-rail-16k.yaml",
              fmt::format("cluster.gpus={}", gpus), fmt::format("parallelism.dp={}", gpus)}));
  };
  const IterationTimeEstimate small = run(64), medium = run(256), large = run(4096);
  EXPECT_LT(small.breakdown.exposed_comm_s, 0.05 * small.iteration_s);
  EXPECT_GT(large.breakdown.exposed_comm_s, 0.4 * large.iteration_s);
  EXPECT_GT(large.iteration_s, 2 * medium.iteration_s / 16);
}

// The same plans as DeepSpeed runs them (sim/README.md, "Frameworks"): its stage 3 splits a layer's
// gather into prefetch buckets, each paying the ring's latency, which costs nothing on 64 GPUs and
// much on 4,096, where the latency of a 4,095-step ring dominates each all-gather.
TEST(IterationTime, DeepSpeedsSmallerGathersCostLatencyAtThousandsOfGpus) {
  const auto run = [](int gpus, const char* framework) {
    return estimate(
        load("04-llama3-8b-ulysses-8xh100.yaml",
             {"model.seq_len=4Ki", "training.global_batch=4096", "parallelism.sp=1",
              "parallelism.sequence_parallel=none", "parallelism.recompute=none",
              std::string("cluster.topology=") + TRAINSIM_SOURCE_DIR + "/topologies/h100-rail-16k.yaml",
              fmt::format("cluster.gpus={}", gpus), fmt::format("parallelism.dp={}", gpus),
              std::string("framework=") + framework}));
  };
  EXPECT_NEAR(run(64, "deepspeed").iteration_s / run(64, "generic").iteration_s, 1, 0.02);
  EXPECT_GT(run(4096, "deepspeed").iteration_s, 1.3 * run(4096, "generic").iteration_s);
}

TEST(IterationTime, OverflowingPlansDoNotFit) {
  const IterationTimeEstimate e =
      estimate(load("01-gpt3-1.3b-dp8.yaml", {"training.micro_batch=64", "training.global_batch=512"}));
  EXPECT_FALSE(e.fits);
  EXPECT_GT(e.peak_hbm_bytes, 80.0 * (1 << 30));
}

TEST(IterationTime, UnexpressiblePlansThrowPlanError) {
  config::Scenario s = load("02-megatron-22b-tp8.yaml");
  s.parallelism.tp = 7;  // 64 heads are not divisible by 7
  s.parallelism.dp = 1;
  s.cluster.gpus = 7;
  EXPECT_ANY_THROW(estimate(s));
}

}  // namespace
}  // namespace trainsim::estimate
