// Defaults, derived values and the cross-field rules of scenarios, each with its message.
#include <cmath>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "sim/config/emit.h"
#include "sim/config/loader.h"
#include "tests/config/config_test_util.h"

namespace trainsim::config {
namespace {

using ::testing::ElementsAre;
using trainsim::testing::errors_of;
using trainsim::testing::ScratchDir;

// A scenario on the 32-GPU test cluster with the given model and parallelism blocks.
std::string scenario(const std::string& model, const std::string& parallelism, const std::string& training,
                     int gpus = 32) {
  return "schema_version: 1\nname: s\nmodel: " + model + "\ntraining: " + training +
         "\nparallelism: " + parallelism +
         "\ncluster: {topology: topo.yaml, hardware: hw.yaml, gpus: " + std::to_string(gpus) + "}\n";
}

class ScenarioRules : public ::testing::Test {
 protected:
  ScenarioRules() { trainsim::testing::write_minimal_cluster(dir_); }
  std::vector<std::string> errors(const std::string& text) {
    dir_.write("s.yaml", text);
    return errors_of([] { load_scenario("s.yaml"); });
  }
  Scenario load(const std::string& text) {
    dir_.write("s.yaml", text);
    return load_scenario("s.yaml");
  }
  ScratchDir dir_;
};

constexpr const char* kLlama = "{preset: llama3-8b}";
constexpr const char* kBatch = "{global_batch: 64}";

TEST_F(ScenarioRules, DefaultsAreFilledAndDpDerived) {
  const Scenario s = load(scenario(kLlama, "{tp: 4, pp: 2}", kBatch));
  EXPECT_EQ(s.parallelism.dp, 4);
  EXPECT_EQ(s.parallelism.sp, 1);
  EXPECT_EQ(s.parallelism.schedule, Schedule::kOneFOneB);
  EXPECT_EQ(s.training.micro_batch, 1);
  EXPECT_EQ(s.training.dtype, Dtype::kBf16);
  EXPECT_EQ(s.micro_batches(), 16);
  EXPECT_EQ(s.cluster.topology.name, "tiny");
  EXPECT_EQ(s.cluster.hardware.gpu.name, "Test GPU");
}

TEST_F(ScenarioRules, ExplicitModelGetsDerivedShape) {
  const Scenario s =
      load(scenario("{layers: 4, hidden: 1024, heads: 16, vocab: 1000, seq_len: 2Ki}", "{}", kBatch, 1));
  EXPECT_EQ(s.model.kv_heads, 16);
  EXPECT_EQ(s.model.head_dim, 64);
  EXPECT_EQ(s.model.ffn_hidden, 4096);
  EXPECT_EQ(s.model.seq_len, 2048);
  EXPECT_TRUE(s.model.preset.empty());
  EXPECT_THAT(
      errors(scenario("{layers: 4, hidden: 1024, heads: 16, vocab: 1000, seq_len: 2048, activation: swiglu}",
                      "{}", kBatch, 1)),
      ElementsAre("s.yaml:3:8: error: model.ffn_hidden: missing required key"));
  EXPECT_THAT(
      errors(scenario("{layers: 4, hidden: 1000, heads: 16, vocab: 1000, seq_len: 2048}", "{}", kBatch, 1)),
      ElementsAre("s.yaml:3:8: error: model: hidden 1000 is not a multiple of heads 16; give head_dim "
                  "explicitly"));
  EXPECT_THAT(
      errors(scenario("{layers: 4, hidden: 1024, heads: 16, kv_heads: 3, vocab: 1000, seq_len: 2048}", "{}",
                      kBatch, 1)),
      ElementsAre("s.yaml:3:8: error: model: kv_heads 3 must divide heads 16 (grouped-query attention "
                  "shares each K/V head among heads / kv_heads query heads)"));
}

TEST_F(ScenarioRules, PresetFieldsCanBeOverridden) {
  const Scenario s = load(scenario("{preset: llama3-8b, seq_len: 32Ki, layers: 16}", "{dp: 32}", kBatch));
  EXPECT_EQ(s.model.preset, "llama3-8b");
  EXPECT_EQ(s.model.layers, 16);
  EXPECT_EQ(s.model.seq_len, 32768);
  EXPECT_EQ(s.model.kv_heads, 8);
  EXPECT_EQ(s.model.ffn_hidden, 14336);
}

TEST_F(ScenarioRules, DegreesMustMultiplyToTheGpuCount) {
  EXPECT_THAT(
      errors(scenario(kLlama, "{tp: 8, pp: 2, dp: 4}", kBatch, 32)),
      ElementsAre("s.yaml:5:33: error: parallelism.dp: tp·pp·dp·sp = 8·2·4·1 = 64 GPUs but cluster.gpus is "
                  "32; change dp to 2 or cluster.gpus to 64"));
  EXPECT_THAT(
      errors(scenario(kLlama, "{tp: 8, pp: 3}", kBatch, 32)),
      ElementsAre("s.yaml:5:14: error: parallelism: tp·pp·sp = 8·3·1 = 24 does not divide cluster.gpus 32, "
                  "so dp cannot be derived; change the degrees or cluster.gpus"));
}

TEST_F(ScenarioRules, MoreGpusThanTheTopologyHas) {
  EXPECT_THAT(
      errors(scenario(kLlama, "{}", kBatch, 64)),
      ElementsAre("s.yaml:6:57: error: cluster.gpus: 64 GPUs requested but topology tiny has 32 (4 nodes of "
                  "8); use a larger topology or fewer GPUs"));
}

TEST_F(ScenarioRules, HeadsMustSplitOverTp) {
  EXPECT_THAT(
      errors(scenario(kLlama, "{tp: 16, dp: 2}", kBatch)),
      ElementsAre(
          "s.yaml:5:19: error: parallelism.tp: tp 16 must divide the 8 key/value heads (Megatron splits "
          "K/V heads across tensor-parallel ranks); use tp <= 8"));
  EXPECT_THAT(
      errors(scenario("{preset: gpt3-760m}", "{tp: 32}", "{global_batch: 4}")),
      ElementsAre("s.yaml:5:19: error: parallelism.tp: tp 32 must divide the 16 attention heads; choose tp "
                  "among the divisors of 16"));
}

TEST_F(ScenarioRules, LayersMustSplitOverStages) {
  EXPECT_THAT(
      errors(scenario(kLlama, "{pp: 4, vpp: 3, dp: 8}", "{global_batch: 64}")),
      ElementsAre(
          "s.yaml:5:19: error: parallelism.pp: pp·vpp = 4·3 = 12 must divide the 32 layers; change pp "
          "or vpp, or set uneven_stages: true to give some stages one layer less"));
  EXPECT_TRUE(
      errors(scenario(kLlama, "{pp: 4, vpp: 3, dp: 8, uneven_stages: true}", "{global_batch: 64}")).empty());
  EXPECT_THAT(
      errors(scenario(kLlama, "{pp: 8, vpp: 5, dp: 4, uneven_stages: true}", "{global_batch: 64}")),
      ElementsAre("s.yaml:5:19: error: parallelism.pp: pp·vpp = 8·5 = 40 model chunks but only 32 layers; "
                  "lower pp or vpp"));
}

// The first and last stage's layers may be given; the other stages must share the rest evenly.
TEST_F(ScenarioRules, FirstAndLastStageLayers) {
  EXPECT_TRUE(errors(scenario(kLlama, "{pp: 4, dp: 8, first_stage_layers: 5, last_stage_layers: 9}",
                              "{global_batch: 64}"))
                  .empty());
  EXPECT_THAT(errors(scenario(kLlama, "{pp: 4, dp: 8, first_stage_layers: 6}", "{global_batch: 64}")),
              ElementsAre("s.yaml:5:49: error: parallelism.first_stage_layers: 32 layers less "
                          "first_stage_layers 6 leave 26 for the "
                          "other 3 stages, which must share them evenly (at least one each); change "
                          "first_stage_layers 6"));
  EXPECT_THAT(errors(scenario(kLlama, "{pp: 4, vpp: 2, dp: 8, first_stage_layers: 5}", "{global_batch: 64}")),
              ElementsAre(::testing::HasSubstr("without virtual stages (vpp 1)")));
}

TEST_F(ScenarioRules, BatchMustSplitOverMicroBatchesAndReplicas) {
  EXPECT_THAT(errors(scenario(kLlama, "{dp: 32}", "{global_batch: 48, micro_batch: 1}")),
              ElementsAre("s.yaml:4:26: error: training.global_batch: global_batch 48 must be a multiple of "
                          "micro_batch·dp = 1·32 "
                          "= 32"));
  EXPECT_THAT(
      errors(scenario(kLlama, "{pp: 4, vpp: 2, dp: 8}", "{global_batch: 16}")),
      ElementsAre(
          "s.yaml:4:26: error: training.global_batch: the interleaved schedule with vpp 2 needs the 2 "
          "micro-batches "
          "per replica to be a multiple of pp 4 (Megatron's rule); change global_batch or micro_batch"));
  EXPECT_THAT(
      errors(scenario(kLlama, "{pp: 4, vpp: 2, dp: 8, schedule: zero-bubble}", "{global_batch: 16}")),
      ElementsAre(
          "s.yaml:4:26: error: training.global_batch: the zero-bubble schedule with vpp 2 needs the 2 "
          "micro-batches "
          "per replica to be a multiple of pp 4 (Megatron's rule); change global_batch or micro_batch"));
  // Without model chunks zero bubble takes any micro-batch count, as 1F1B.
  EXPECT_TRUE(
      errors(scenario(kLlama, "{pp: 4, dp: 8, schedule: zero-bubble}", "{global_batch: 16}")).empty());
}

TEST_F(ScenarioRules, ScheduleAndVppAgree) {
  EXPECT_THAT(
      errors(scenario(kLlama, "{pp: 4, dp: 8, schedule: interleaved}", kBatch)),
      ElementsAre("s.yaml:5:14: error: parallelism.vpp: schedule interleaved needs vpp > 1 model chunks per "
                  "stage; set vpp or use 1f1b"));
  EXPECT_THAT(
      errors(scenario(kLlama, "{pp: 4, dp: 8, vpp: 2, schedule: gpipe}", kBatch)),
      ElementsAre("s.yaml:5:34: error: parallelism.vpp: vpp 2 only makes sense with schedule: interleaved, "
                  "zero-bubble, zb-v or dualpipev"));
  // zb-v: two chunks in a V, vpp 2 by default; no micro-batch multiple of pp needed.
  EXPECT_TRUE(errors(scenario(kLlama, "{pp: 4, dp: 8, schedule: zb-v}", "{global_batch: 56}")).empty());
  EXPECT_THAT(
      errors(scenario(kLlama, "{pp: 4, dp: 8, vpp: 4, schedule: zb-v}", kBatch)),
      ElementsAre(
          "s.yaml:5:34: error: parallelism.vpp: schedule zb-v places 2 model chunks per stage in a V; "
          "set vpp: 2 (got 4)"));
  // dualpipev: the same V, and DeepSeek's floor of 2pp micro-batches per replica.
  EXPECT_TRUE(errors(scenario(kLlama, "{pp: 4, dp: 8, schedule: dualpipev}", kBatch)).empty());
  EXPECT_THAT(
      errors(scenario(kLlama, "{pp: 4, dp: 8, schedule: dualpipev}", "{global_batch: 56}")),
      ElementsAre("s.yaml:4:26: error: training.global_batch: the dualpipev schedule needs at least 2·pp = 8 "
                  "micro-batches per replica (DeepSeek's rule), got 7; raise global_batch or lower "
                  "micro_batch"));
  EXPECT_THAT(
      errors(scenario(kLlama, "{pp: 4, dp: 8, vpp: 4, schedule: dualpipev}", kBatch)),
      ElementsAre(
          "s.yaml:5:34: error: parallelism.vpp: schedule dualpipev places 2 model chunks per stage in a "
          "V; set vpp: 2 (got 4)"));
  EXPECT_THAT(errors(scenario(kLlama, "{dp: 32, schedule: zero-bubble}", kBatch)),
              ElementsAre("s.yaml:5:33: error: parallelism.schedule: schedule zero-bubble needs pp > 1"));
  EXPECT_THAT(
      errors(scenario(
          kLlama,
          "{pp: 2, dp: 4, sp: 4, sequence_parallel: fpdt, fpdt: {chunk_tokens: 2Ki}, schedule: zero-bubble}",
          kBatch)),
      ElementsAre("s.yaml:5:19: error: parallelism.pp: FPDT calls dist.barrier() on the world group every "
                  "chunk, which deadlocks across pipeline stages; set pp: 1",
                  "s.yaml:5:98: error: parallelism.schedule: schedule zero-bubble splits each backward into "
                  "input- and weight-gradient passes, which the FPDT chunk loop does not; use 1f1b or "
                  "interleaved with sequence_parallel: fpdt"));
}

TEST_F(ScenarioRules, SequenceParallelRules) {
  EXPECT_THAT(
      errors(scenario(kLlama, "{sp: 4, dp: 8}", kBatch)),
      ElementsAre("s.yaml:5:19: error: parallelism.sp: sp 4 needs sequence_parallel ulysses, ring or fpdt "
                  "(megatron sequence parallelism reuses the tp group); set sp: 1 or choose one of those"));
  EXPECT_THAT(
      errors(scenario("{preset: gpt3-2.7b}", "{sp: 32, sequence_parallel: ulysses}", "{global_batch: 1}")),
      ElementsAre());
  EXPECT_THAT(
      errors(scenario("{preset: gpt3-760m}", "{sp: 32, sequence_parallel: ulysses}", "{global_batch: 1}")),
      ElementsAre("s.yaml:5:19: error: parallelism.sp: the all-to-all scatters the 16 heads over sp 32; sp "
                  "must divide 16"));
  EXPECT_THAT(errors(scenario(kLlama, "{sp: 4, dp: 8, sequence_parallel: ulysses, fpdt: {chunk_tokens: 1Ki}}",
                              kBatch)),
              ElementsAre("s.yaml:5:63: error: parallelism.fpdt: fpdt settings are only used with "
                          "sequence_parallel: fpdt; remove them or set it"));
}

// Gradients default to the storage dtype (the training dtype; bf16 for fp8) without a framework; fp32,
// bf16 and fp16 may be named.
TEST_F(ScenarioRules, GradientDtypeDefaultsToTheStorageDtype) {
  EXPECT_EQ(load(scenario(kLlama, "{}", kBatch, 1)).gradient_dtype(), Dtype::kBf16);
  EXPECT_EQ(load(scenario(kLlama, "{}", "{global_batch: 64, dtype: fp16}", 1)).gradient_dtype(),
            Dtype::kFp16);
  EXPECT_EQ(load(scenario(kLlama, "{}", "{global_batch: 64, grad_dtype: fp32}", 1)).gradient_dtype(),
            Dtype::kFp32);
  EXPECT_THAT(errors(scenario(kLlama, "{}", "{global_batch: 64, grad_dtype: fp8}", 1)),
              ElementsAre("s.yaml:4:42: error: training.grad_dtype: gradients are accumulated and reduced in "
                          "fp32, bf16 or fp16, not fp8"));
}

// FP8 primary weights are an FP8 training option.
TEST_F(ScenarioRules, Fp8ParamsNeedFp8Training) {
  EXPECT_THAT(errors(scenario(kLlama, "{}", "{global_batch: 64, fp8_params: true}", 1)),
              ElementsAre("s.yaml:4:42: error: training.fp8_params: FP8 weights need FP8 training: set "
                          "training.dtype to fp8, or fp8_params to false (training.dtype is bf16)"));
}

// A framework supplies the keys a scenario leaves out (sim/config/framework.cc); what the scenario
// sets wins.
TEST_F(ScenarioRules, FrameworkDefaults) {
  const auto with = [&](const std::string& framework, const std::string& parallelism,
                        const std::string& training = kBatch) {
    return load("framework: " + framework + "\n" + scenario(kLlama, parallelism, training));
  };
  const double MiB = 1024.0 * 1024.0;
  const Scenario megatron = with("megatron-lm", "{dp: 32}");
  EXPECT_EQ(megatron.gradient_dtype(), Dtype::kFp32);
  EXPECT_FALSE(megatron.overlap_grad_reduce());
  EXPECT_TRUE(std::isinf(megatron.dp_bucket_bytes()));  // one bucket without overlap
  EXPECT_EQ(with("megatron-lm", "{dp: 32, overlap_grad_reduce: true}").dp_bucket_bytes(), 40e6 * 4);
  EXPECT_EQ(with("megatron-lm", "{dp: 32}", "{global_batch: 64, dtype: fp16}").gradient_dtype(),
            Dtype::kFp16);
  const Scenario nemo = with("nemo", "{dp: 32}");
  EXPECT_TRUE(nemo.overlap_grad_reduce());
  EXPECT_EQ(nemo.dp_bucket_bytes(), 40e6 * 4);
  const Scenario deepspeed = with("deepspeed", "{dp: 32, zero_stage: 1}");
  EXPECT_EQ(deepspeed.gradient_dtype(), Dtype::kBf16);
  EXPECT_FALSE(deepspeed.overlap_grad_reduce());
  EXPECT_EQ(deepspeed.dp_bucket_bytes(), 5e8 * 2);
  const Scenario stage3 = with("deepspeed", "{dp: 32, zero_stage: 3}");
  EXPECT_TRUE(stage3.overlap_grad_reduce());
  EXPECT_EQ(stage3.zero3_gather_bucket_bytes(), 5e7 * 2);  // stage3_prefetch_bucket_size, bf16
  EXPECT_EQ(stage3.zero3_persistence_threshold(), 100000);
  EXPECT_TRUE(stage3.zero3_bucketed_reduce());
  const Scenario stage3_set =
      with("megatron-deepspeed",
           "{dp: 32, zero_stage: 3, zero3_gather_bucket: 1GB, zero3_persistence_threshold: 0}");
  EXPECT_EQ(stage3_set.zero3_gather_bucket_bytes(), 1e9);
  EXPECT_EQ(stage3_set.zero3_persistence_threshold(), 0);
  const Scenario titan = with("torchtitan", "{dp: 32, zero_stage: 3}");
  EXPECT_EQ(titan.gradient_dtype(), Dtype::kFp32);
  EXPECT_EQ(titan.dp_bucket_bytes(), 100 * MiB);
  EXPECT_TRUE(titan.reshard_after_forward());
  EXPECT_TRUE(std::isinf(titan.zero3_gather_bucket_bytes()));  // one all-gather per unit
  EXPECT_EQ(titan.zero3_persistence_threshold(), 0);
  EXPECT_FALSE(titan.zero3_bucketed_reduce());
  EXPECT_FALSE(with("torchtitan", "{dp: 16, pp: 2, zero_stage: 3}").reshard_after_forward());
  const Scenario set =
      with("torchtitan", "{dp: 32, zero_stage: 3, reshard_after_forward: false, dp_bucket: 1MiB}",
           "{global_batch: 64, grad_dtype: bf16}");
  EXPECT_FALSE(set.reshard_after_forward());
  EXPECT_EQ(set.dp_bucket_bytes(), MiB);
  EXPECT_EQ(set.gradient_dtype(), Dtype::kBf16);
  const Scenario generic = load(scenario(kLlama, "{dp: 32}", kBatch));
  EXPECT_EQ(generic.framework, Framework::kGeneric);
  EXPECT_EQ(generic.dp_bucket_bytes(), 25 * MiB);
  EXPECT_TRUE(generic.overlap_grad_reduce());
  // Receives posted with the previous step of their pass: Megatron-Core and NeMo, not the others.
  EXPECT_TRUE(megatron.overlap_p2p_comm());
  EXPECT_TRUE(nemo.overlap_p2p_comm());
  EXPECT_FALSE(deepspeed.overlap_p2p_comm());
  EXPECT_FALSE(titan.overlap_p2p_comm());
  EXPECT_FALSE(generic.overlap_p2p_comm());
  EXPECT_FALSE(with("nemo", "{dp: 32, overlap_p2p_comm: false}").overlap_p2p_comm());
  // A MoE dispatcher waiting on the host for its token counts: Megatron-Core's always, torchtitan's
  // with expert parallelism, DeepSpeed's capacity-padded one never.
  EXPECT_TRUE(megatron.moe_host_sync());
  EXPECT_TRUE(nemo.moe_host_sync());
  EXPECT_FALSE(deepspeed.moe_host_sync());
  EXPECT_FALSE(titan.moe_host_sync());
  config::Scenario titan_ep = titan;
  titan_ep.parallelism.ep = 8;
  EXPECT_TRUE(titan_ep.moe_host_sync());
  EXPECT_FALSE(generic.moe_host_sync());
  EXPECT_FALSE(with("nemo", "{dp: 32, moe_host_sync: false}").moe_host_sync());
  // A device synchronisation before each micro-batch's forward: DeepSpeed's throughput timer.
  EXPECT_TRUE(deepspeed.micro_batch_sync());
  EXPECT_TRUE(stage3_set.micro_batch_sync());
  EXPECT_FALSE(megatron.micro_batch_sync());
  EXPECT_FALSE(nemo.micro_batch_sync());
  EXPECT_FALSE(titan.micro_batch_sync());
  EXPECT_FALSE(generic.micro_batch_sync());
  EXPECT_FALSE(with("deepspeed", "{dp: 32, micro_batch_sync: false}").micro_batch_sync());
  EXPECT_TRUE(with("megatron-lm", "{dp: 32, micro_batch_sync: true}").micro_batch_sync());
}

// Which ZeRO stages compose with pipeline parallelism depends on the framework.
TEST_F(ScenarioRules, ZeroStagesUnderPipelineFollowTheFramework) {
  const auto framework_errors = [&](const std::string& framework, const std::string& parallelism) {
    return errors("framework: " + framework + "\n" + scenario(kLlama, parallelism, kBatch));
  };
  EXPECT_THAT(
      framework_errors("deepspeed", "{pp: 2, dp: 16, zero_stage: 2}"),
      ElementsAre(
          "s.yaml:6:42: error: parallelism.zero_stage: DeepSpeed's pipeline engine refuses ZeRO-2 and ZeRO-3 "
          "(deepspeed/runtime/pipe/engine.py); use zero_stage 0 or 1 with pp 2, or pp: 1"));
  EXPECT_THAT(
      framework_errors("generic", "{pp: 2, dp: 16, zero_stage: 3}"),
      ElementsAre(
          "s.yaml:6:42: error: parallelism.zero_stage: zero_stage 3 with pp 2 is modelled as torchtitan "
          "runs it (FSDP2 under torch.distributed.pipelining); set framework: torchtitan and "
          "zero_stage: 3, or use zero_stage 0 or 1"));
  EXPECT_THAT(
      framework_errors("torchtitan", "{dp: 32, zero_stage: 1}"),
      ElementsAre(
          "s.yaml:6:35: error: parallelism.zero_stage: torchtitan shards data-parallel state with FSDP2 "
          "only: zero_stage 3 (with reshard_after_forward: false to keep parameters gathered "
          "from forward to backward), or 0 to replicate; got 1"));
  EXPECT_THAT(framework_errors("torchtitan", "{pp: 2, dp: 16, zero_stage: 3, reshard_after_forward: true}"),
              ElementsAre(::testing::HasSubstr("reshard_after_forward: true with pp 2 is not modelled")));
  EXPECT_THAT(framework_errors("torchtitan", "{pp: 2, dp: 16, zero_stage: 3, schedule: zero-bubble}"),
              ElementsAre(::testing::HasSubstr("zero_stage 3 with schedule zero-bubble is not modelled")));
  EXPECT_THAT(framework_errors("generic", "{dp: 32, zero_stage: 1, reshard_after_forward: false}"),
              ElementsAre(::testing::HasSubstr("reshard_after_forward is a ZeRO-3 / FSDP setting")));
  EXPECT_TRUE(framework_errors("torchtitan", "{pp: 2, dp: 16, zero_stage: 3}").empty());
  EXPECT_THAT(framework_errors("jax", "{}"), ElementsAre(::testing::HasSubstr("framework")));
}

// `show` writes a framework's defaults as comments, so the output loads back to the same scenario and
// a changed plan loaded from it takes the framework's default again; search and sweep leave them out.
TEST_F(ScenarioRules, FrameworkDefaultsAreShownAsComments) {
  const Scenario s =
      load("framework: torchtitan\n" + scenario(kLlama, "{pp: 2, dp: 16, zero_stage: 3}", kBatch));
  const std::string shown = to_yaml(s);
  EXPECT_THAT(shown, ::testing::HasSubstr("framework: torchtitan\n"));
  EXPECT_THAT(shown, ::testing::HasSubstr("  # reshard_after_forward: false (torchtitan default)\n"));
  EXPECT_THAT(shown, ::testing::HasSubstr("  # grad_dtype: fp32 (torchtitan default)\n"));
  EXPECT_THAT(to_yaml(s, Defaults::kAsGiven), ::testing::Not(::testing::HasSubstr("reshard_after_forward")));
  dir_.write("shown.yaml", shown);
  EXPECT_EQ(to_yaml(load_scenario("shown.yaml")), shown);
}

// cp_comm chooses how context parallelism exchanges K/V; it means nothing for the other schemes.
TEST_F(ScenarioRules, CpCommBelongsToContextParallelism) {
  EXPECT_EQ(load(scenario(kLlama, "{sp: 2, sequence_parallel: ring, cp_comm: all_gather}", kBatch, 2))
                .parallelism.cp_comm,
            CpComm::kAllGather);
  EXPECT_THAT(errors(scenario(kLlama, "{sp: 2, sequence_parallel: ulysses, cp_comm: all_gather}", kBatch, 2)),
              ElementsAre(::testing::HasSubstr("parallelism.cp_comm: cp_comm is only used with "
                                               "sequence_parallel: ring (Megatron context parallelism)")));
}

// AdamW is accepted as what it is: Adam's states, with its decoupled weight decay.
TEST_F(ScenarioRules, AdamWIsAnOptimizer) {
  EXPECT_EQ(load(scenario(kLlama, "{}", "{global_batch: 64, optimizer: adamw}", 1)).training.optimizer,
            Optimizer::kAdamW);
}

// The memory headroom is a percentage of HBM (5 % unless given) that a plan's peak must leave free.
TEST_F(ScenarioRules, MemoryHeadroomIsAPercentageOfHbm) {
  const Scenario plain = load(scenario(kLlama, "{}", kBatch, 1));
  EXPECT_DOUBLE_EQ(plain.training.memory_headroom, 0.05);
  EXPECT_DOUBLE_EQ(plain.usable_hbm_bytes(), 0.95 * plain.cluster.hardware.gpu.hbm_capacity_bytes);
  const Scenario none = load(scenario(kLlama, "{}", "{global_batch: 64, memory_headroom: 0%}", 1));
  EXPECT_DOUBLE_EQ(none.usable_hbm_bytes(), none.cluster.hardware.gpu.hbm_capacity_bytes);
  EXPECT_THAT(errors(scenario(kLlama, "{}", "{global_batch: 64, memory_headroom: 0.1}", 1)),
              ElementsAre("s.yaml:4:47: error: training.memory_headroom: expected a percentage such as 5%, "
                          "got \"0.1\""));
  EXPECT_THAT(errors(scenario(kLlama, "{}", "{global_batch: 64, memory_headroom: 60%}", 1)),
              ElementsAre("s.yaml:4:47: error: training.memory_headroom: must be at most 50%, got 60%"));
}

// The kernel follows the model (auto: unfused for learned positions, fused for RoPE), never the plan;
// ring attention and FPDT refuse an unfused one, saying whether auto chose it.
TEST_F(ScenarioRules, AttentionKernelFollowsTheModelNotThePlan) {
  const std::string gpt = "{layers: 4, hidden: 1024, heads: 16, vocab: 1000, seq_len: 2Ki}";
  const std::string gpt_fused =
      "{layers: 4, hidden: 1024, heads: 16, vocab: 1000, seq_len: 2Ki, attention: fused}";
  EXPECT_EQ(load(scenario(gpt, "{}", kBatch, 1)).model.attention, AttentionKernel::kUnfused);
  EXPECT_EQ(load(scenario(gpt, "{sp: 4, dp: 8, sequence_parallel: ulysses}", kBatch)).model.attention,
            AttentionKernel::kUnfused);
  EXPECT_EQ(load(scenario(kLlama, "{sp: 4, dp: 8, sequence_parallel: ulysses}", kBatch)).model.attention,
            AttentionKernel::kFused);
  EXPECT_EQ(load(scenario(gpt_fused, "{sp: 4, dp: 8, sequence_parallel: ring}", kBatch)).model.attention,
            AttentionKernel::kFused);
  EXPECT_THAT(
      errors(scenario(gpt, "{sp: 4, dp: 8, sequence_parallel: ring}", kBatch)),
      ElementsAre(
          "s.yaml:5:48: error: parallelism.sequence_parallel: sequence_parallel: ring needs a fused "
          "attention kernel "
          "(FPDT calls flash-attn's forward and backward per chunk; ring attention merges the "
          "per-block outputs by their log-sum-exp, which only a fused kernel returns), but "
          "model.attention is unfused (auto: a model with learned positions under framework generic); "
          "set model.attention: fused"));
  EXPECT_THAT(
      errors(scenario("{preset: llama3-8b, attention: unfused}",
                      "{sp: 4, dp: 8, sequence_parallel: fpdt, fpdt: {chunk_tokens: 2Ki}}", kBatch)),
      ElementsAre(::testing::HasSubstr("but model.attention is unfused; set model.attention: fused")));
  EXPECT_THAT(errors(scenario("{preset: llama3-8b, attention: flash}", "{}", kBatch)),
              ElementsAre(::testing::HasSubstr("model.attention: unknown value \"flash\"")));

  // Frameworks whose default path is a fused kernel (Transformer Engine, SDPA) use it for any model.
  Scenario s;
  s.model.position_embedding = PositionEmbedding::kLearned;
  for (const auto& [framework, kernel] : {std::pair{Framework::kGeneric, AttentionKernel::kUnfused},
                                          {Framework::kDeepSpeed, AttentionKernel::kUnfused},
                                          {Framework::kMegatronDeepSpeed, AttentionKernel::kUnfused},
                                          {Framework::kMegatronLm, AttentionKernel::kFused},
                                          {Framework::kNemo, AttentionKernel::kFused},
                                          {Framework::kTorchtitan, AttentionKernel::kFused}}) {
    s.framework = framework;
    EXPECT_EQ(s.attention_kernel(), kernel) << to_string(framework);
  }
  s.model.attention = AttentionKernel::kUnfused;
  EXPECT_EQ(s.attention_kernel(), AttentionKernel::kUnfused);
}

TEST_F(ScenarioRules, FpdtChunkRules) {
  const std::string model = "{preset: llama3-8b, seq_len: 256Ki}";
  const Scenario s = load(scenario(model, "{sp: 4, dp: 8, sequence_parallel: fpdt}", kBatch));
  EXPECT_EQ(s.fpdt_chunks(), 4);
  EXPECT_EQ(s.parallelism.fpdt.chunk_tokens, 65536);
  EXPECT_TRUE(s.parallelism.fpdt.offload);
  EXPECT_THAT(
      errors(scenario(model, "{sp: 4, dp: 8, sequence_parallel: fpdt, fpdt: {chunk_tokens: 96Ki}}", kBatch)),
      ElementsAre("s.yaml:5:75: error: parallelism.fpdt.chunk_tokens: fpdt.chunk_tokens 96Ki must divide "
                  "seq_len 256Ki (u = "
                  "seq_len / chunk_tokens chunks)"));
  EXPECT_THAT(errors(scenario("{preset: llama3-8b, seq_len: 3072}",
                              "{sp: 4, dp: 8, sequence_parallel: fpdt, fpdt: {chunk_tokens: 1022}}", kBatch)),
              ElementsAre("s.yaml:5:75: error: parallelism.fpdt.chunk_tokens: fpdt.chunk_tokens 1022 must "
                          "divide seq_len 3Ki (u = "
                          "seq_len / chunk_tokens chunks)"));
}

TEST_F(ScenarioRules, DtypeNeedsAPeakInTheProfile) {
  EXPECT_THAT(
      errors(scenario(kLlama, "{dp: 32}", "{global_batch: 64, dtype: fp8}")),
      ElementsAre("s.yaml:4:37: error: training.dtype: the hardware profile gpu has no peak FLOP rate for "
                  "fp8; choose another dtype or add gpu.peak_flops.fp8 to the profile"));
  // fp8 training runs attention and the LM head in bf16: the profile needs both peaks.
  dir_.write(
      "hw.yaml",
      "schema_version: 1\nname: gpu\ngpu: {name: Test GPU, peak_flops: {fp8: 624TFLOP/s}, hbm: {capacity: "
      "80GiB, bandwidth: 2TB/s}}\nhost_link: {h2d_bandwidth: 25GB/s, d2h_bandwidth: 25GB/s}\n"
      "provenance: {kind: cited}\nsources: {gpu: test datasheet, host_link: test measurement}\n");
  EXPECT_THAT(
      errors(scenario(kLlama, "{dp: 32}", "{global_batch: 64, dtype: fp8}")),
      ElementsAre("s.yaml:4:37: error: training.dtype: the hardware profile gpu has no peak FLOP rate for "
                  "bf16; choose another dtype or add gpu.peak_flops.bf16 to the profile"));
}

TEST_F(ScenarioRules, OrderMustBeAPermutation) {
  EXPECT_THAT(
      errors(scenario(kLlama, "{dp: 32, order: tp-dp-pp}", kBatch)),
      ElementsAre("s.yaml:5:30: error: parallelism.order: \"tp-dp-pp\" is not an order of tp, sp, dp and pp "
                  "(innermost first), e.g. tp-sp-dp-pp"));
}

TEST_F(ScenarioRules, TheScenariosPriceReplacesTheProfiles) {
  const auto text = [](const std::string& price) {
    return "schema_version: 1\nname: s\nmodel: {preset: llama3-8b}\ntraining: {global_batch: 64}\n"
           "cluster: {topology: topo.yaml, hardware: hw.yaml, cost: {price_per_gpu_hour: " +
           price + "}}\n";
  };
  const Scenario s = load(text("2.49USD"));
  EXPECT_EQ(s.cluster.price_per_gpu_hour_usd, 2.49);
  EXPECT_EQ(s.cluster.hardware.cost.price_per_gpu_hour_usd, 2.49);  // what every consumer reads
  const std::string yaml = to_yaml(s);
  EXPECT_NE(yaml.find("cost: {price_per_gpu_hour: 2.49USD}"), std::string::npos);
  dir_.write("shown.yaml", yaml);
  EXPECT_EQ(to_yaml(load_scenario("shown.yaml")), yaml);
  EXPECT_THAT(
      errors(text("2.49")),
      ElementsAre("s.yaml:5:78: error: cluster.cost.price_per_gpu_hour: expected a positive price in US "
                  "dollars, e.g. 2.50USD; got \"2.49\""));
  // Without one, the profile's (the test profile has none).
  EXPECT_FALSE(load(scenario(kLlama, "{}", kBatch)).cluster.hardware.cost.price_per_gpu_hour_usd);
}

TEST_F(ScenarioRules, ShownYamlLoadsBackToTheSameScenario) {
  const Scenario s = load(scenario("{preset: llama3-8b, seq_len: 256Ki}",
                                   "{sp: 4, dp: 8, sequence_parallel: fpdt, zero_stage: 3}", kBatch));
  const std::string yaml = to_yaml(s);
  dir_.write("shown.yaml", yaml);
  EXPECT_EQ(to_yaml(load_scenario("shown.yaml")), yaml);
}

constexpr const char* kMixtral = "{preset: mixtral-8x7b}";

TEST_F(ScenarioRules, MoeDefaultsAndOverrides) {
  const Scenario s = load(scenario(
      "{layers: 4, hidden: 1024, heads: 16, vocab: 1000, seq_len: 2Ki, moe: {experts: 16, top_k: 2}}",
      "{dp: 32, ep: 8}", kBatch));
  EXPECT_EQ(s.model.moe.expert_ffn_hidden, 4096);  // the dense ffn_hidden
  EXPECT_EQ(s.model.moe.shared_experts, 0);
  EXPECT_EQ(s.model.moe.capacity_factor, 1.0);
  EXPECT_EQ(s.parallelism.ep, 8);
  const Scenario o =
      load(scenario("{preset: mixtral-8x7b, moe: {capacity_factor: 1.25}}", "{dp: 32, ep: 4}", kBatch));
  EXPECT_EQ(o.model.moe.experts, 8);
  EXPECT_EQ(o.model.moe.capacity_factor, 1.25);
}

TEST_F(ScenarioRules, MoeShownYamlLoadsBackToTheSameScenario) {
  const Scenario s = load(scenario("{preset: deepseek-moe-16b, moe: {capacity_factor: 1.5}}",
                                   "{tp: 2, dp: 16, ep: 8, sequence_parallel: megatron}", kBatch));
  const std::string yaml = to_yaml(s);
  EXPECT_NE(yaml.find("shared_experts: 2"), std::string::npos);
  dir_.write("shown.yaml", yaml);
  EXPECT_EQ(to_yaml(load_scenario("shown.yaml")), yaml);
}

TEST_F(ScenarioRules, MoeModelRules) {
  EXPECT_THAT(errors(scenario("{preset: mixtral-8x7b, moe: {top_k: 9}}", "{dp: 32}", kBatch)),
              ElementsAre("s.yaml:3:36: error: model.moe: moe.top_k 9 routes each token to more experts than "
                          "the 8 there are; use top_k <= 8"));
  EXPECT_THAT(errors(scenario("{preset: mixtral-8x7b, moe: {capacity_factor: 5}}", "{dp: 32}", kBatch)),
              ElementsAre("s.yaml:3:36: error: model.moe: moe.capacity_factor 5 exceeds experts / top_k = 4: "
                          "the busiest expert cannot receive more than every token"));
  EXPECT_THAT(errors(scenario("{preset: mixtral-8x7b, moe: {capacity_factor: 0.5}}", "{dp: 32}", kBatch)),
              ElementsAre("s.yaml:3:54: error: model.moe.capacity_factor: must be at least 1, got 0.5"));
  EXPECT_THAT(errors(scenario("{preset: mixtral-8x7b, moe: {dense_layers: 32}}", "{dp: 32}", kBatch)),
              ElementsAre("s.yaml:3:36: error: model.moe: moe.dense_layers 32 leaves none of the 32 layers "
                          "with experts; use fewer, or remove the moe section for a dense model"));
  EXPECT_THAT(errors(scenario("{preset: llama3-8b, moe: {top_k: 2}}", "{dp: 32}", kBatch)),
              ElementsAre("s.yaml:3:33: error: model.moe.experts: missing required key"));
  EXPECT_THAT(errors(scenario("{preset: mixtral-8x7b, moe: {expert: 4}}", "{dp: 32}", kBatch)),
              ElementsAre("s.yaml:3:37: error: model.moe.expert: unknown key \"expert\" (did you mean "
                          "\"experts\"?)"));
}

TEST_F(ScenarioRules, ExpertParallelRules) {
  EXPECT_THAT(
      errors(scenario("{preset: llama3-8b}", "{dp: 32, ep: 4}", kBatch)),
      ElementsAre("s.yaml:5:27: error: parallelism.ep: ep 4 spreads experts, but the model has none; add "
                  "a model.moe section or remove it"));
  EXPECT_THAT(
      errors(scenario(kMixtral, "{dp: 4, pp: 8, ep: 8}", kBatch)),
      ElementsAre("s.yaml:5:33: error: parallelism.ep: ep 8 must divide dp 4 (expert parallelism spreads "
                  "the experts over data-parallel ranks); choose ep among the divisors of 4"));
  EXPECT_THAT(
      errors(scenario(kMixtral, "{dp: 32, ep: 16}", kBatch)),
      ElementsAre("s.yaml:5:27: error: parallelism.ep: ep 16 must divide the 8 experts of each MoE layer"));
  EXPECT_THAT(
      errors(scenario(kMixtral, "{tp: 2, dp: 16, ep: 8}", kBatch)),
      ElementsAre("s.yaml:5:14: error: parallelism.sequence_parallel: a mixture of experts with tp 2 needs "
                  "sequence_parallel: megatron (Megatron-LM requires it: the token dispatcher works on "
                  "sequence-sharded tokens)"));
  EXPECT_THAT(errors(scenario("{preset: llama3-8b}",
                              "{tp: 2, dp: 16, expert_tp: 1, sequence_parallel: megatron}", kBatch)),
              ElementsAre("s.yaml:5:41: error: parallelism.expert_tp: expert_tp 1 spreads experts, but the "
                          "model has none; add "
                          "a model.moe section or remove it"));
  EXPECT_THAT(
      errors(scenario(kMixtral, "{tp: 4, dp: 8, ep: 8, expert_tp: 3, sequence_parallel: megatron}", kBatch)),
      ElementsAre("s.yaml:5:47: error: parallelism.expert_tp: expert_tp 3 must divide tp 4; choose it among "
                  "the divisors of 4",
                  "s.yaml:5:47: error: parallelism.expert_tp: expert_tp 3 must divide moe.expert_ffn_hidden "
                  "14336"));
  EXPECT_THAT(
      errors(scenario(kMixtral, "{tp: 4, dp: 8, ep: 6, expert_tp: 1, sequence_parallel: megatron}", kBatch)),
      ElementsAre(
          "s.yaml:5:33: error: parallelism.ep: ep 6 must divide tp / expert_tp = 4 or be a multiple "
          "of it (expert groups take the folded tensor-parallel ranks first, then data-parallel ones)",
          "s.yaml:5:33: error: parallelism.ep: ep 6 must divide the 8 experts of each MoE layer"));
  EXPECT_THAT(
      errors(scenario("{preset: qwen3-30b-a3b}",
                      "{tp: 2, dp: 16, ep: 64, expert_tp: 1, sequence_parallel: megatron}", kBatch)),
      ElementsAre(
          "s.yaml:5:34: error: parallelism.ep: ep 64 must divide (tp / expert_tp) x dp = 2 x 16 (expert "
          "groups take the folded tensor-parallel ranks, then data-parallel ones); choose ep among "
          "the divisors of 32"));
  EXPECT_THAT(
      errors(scenario(kMixtral, "{dp: 32, ep: 8, zero_stage: 3}", kBatch)),
      ElementsAre("s.yaml:5:42: error: parallelism.zero_stage: a mixture of experts with zero_stage 3 is not "
                  "modelled; use zero_stage 0, 1 or 2 (expert states are sharded over their "
                  "expert-data-parallel group)"));
  EXPECT_THAT(errors(scenario("{preset: mixtral-8x7b, seq_len: 128Ki}",
                              "{sp: 4, dp: 8, sequence_parallel: fpdt}", kBatch)),
              ElementsAre("s.yaml:5:48: error: parallelism.sequence_parallel: a mixture of experts with "
                          "sequence_parallel: fpdt "
                          "is not modelled (FPDT chunks a dense MLP); use ulysses or ring"));
  EXPECT_TRUE(
      errors(scenario(kMixtral, "{tp: 2, dp: 16, ep: 8, sequence_parallel: megatron}", kBatch)).empty());
  // Megatron-Core's conditions on overlap_moe_expert_parallel_comm.
  EXPECT_THAT(errors(scenario(kMixtral, "{dp: 32, ep_comm_overlap: true}", kBatch)),
              ElementsAre("s.yaml:5:40: error: parallelism.ep_comm_overlap: ep_comm_overlap hides expert "
                          "all-to-alls, so it needs ep > 1 (Megatron-Core asserts it); set ep or remove "
                          "ep_comm_overlap"));
  EXPECT_THAT(errors(scenario(kMixtral, "{pp: 2, dp: 16, ep: 8, ep_comm_overlap: true}", kBatch)),
              ElementsAre("s.yaml:5:54: error: parallelism.ep_comm_overlap: ep_comm_overlap pairs the "
                          "forwards and backwards of 1F1B: with pp 2 it needs schedule: interleaved "
                          "(Megatron-Core requires a virtual pipeline), not 1f1b"));
  EXPECT_THAT(errors(scenario(kMixtral, "{dp: 32, ep: 8, ep_comm_overlap: true, recompute: full}", kBatch)),
              ElementsAre("s.yaml:5:47: error: parallelism.ep_comm_overlap: ep_comm_overlap cannot run with "
                          "recompute: full (Megatron-Core refuses it); use recompute: selective or none"));
  EXPECT_TRUE(
      errors(scenario(kMixtral,
                      "{pp: 2, vpp: 2, dp: 16, ep: 8, schedule: interleaved, ep_comm_overlap: true}", kBatch))
          .empty());
}

TEST_F(ScenarioRules, LatentAttentionDefaultsAndRoundTrip) {
  const Scenario s =
      load(scenario("{layers: 4, hidden: 1024, heads: 16, vocab: 1000, seq_len: 2Ki, linear_bias: false, "
                    "mla: {kv_lora_rank: "
                    "256, rope_head_dim: 32}}",
                    "{dp: 32}", kBatch));
  EXPECT_EQ(s.model.mla.v_head_dim, 64);  // the head_dim, hidden / heads
  EXPECT_EQ(s.model.mla.q_lora_rank, 0);  // queries without a latent
  const Scenario v3 = load(scenario("{preset: deepseek-v3, layers: 8}",
                                    "{tp: 8, dp: 4, ep: 4, sequence_parallel: "
                                    "megatron}",
                                    kBatch));
  const std::string yaml = to_yaml(v3);
  EXPECT_NE(yaml.find("kv_lora_rank: 512"), std::string::npos);
  EXPECT_NE(yaml.find("q_lora_rank: 1536"), std::string::npos);
  dir_.write("shown.yaml", yaml);
  EXPECT_EQ(to_yaml(load_scenario("shown.yaml")), yaml);
}

TEST_F(ScenarioRules, ExpertTensorParallelismDefaultsToTpAndRoundTrips) {
  const Scenario plain =
      load(scenario(kMixtral, "{tp: 2, dp: 16, ep: 8, sequence_parallel: megatron}", kBatch));
  EXPECT_EQ(plain.parallelism.expert_tp_degree(), 2);
  EXPECT_EQ(to_yaml(plain).find("expert_tp"), std::string::npos);
  const Scenario folded =
      load(scenario(kMixtral, "{tp: 4, dp: 8, ep: 8, expert_tp: 1, sequence_parallel: megatron}", kBatch));
  EXPECT_EQ(folded.parallelism.expert_tp_degree(), 1);
  const std::string yaml = to_yaml(folded);
  EXPECT_NE(yaml.find("expert_tp: 1"), std::string::npos);
  dir_.write("shown.yaml", yaml);
  EXPECT_EQ(to_yaml(load_scenario("shown.yaml")), yaml);
}

TEST_F(ScenarioRules, LatentAttentionRules) {
  EXPECT_THAT(
      errors(scenario("{preset: llama3-8b, mla: {kv_lora_rank: 512}}", "{dp: 32}", kBatch)),
      ElementsAre("s.yaml:3:33: error: model.mla: multi-head latent attention projects keys and values "
                  "up to every head: kv_heads 8 must equal heads 32"));
  EXPECT_THAT(
      errors(scenario("{layers: 4, hidden: 1024, heads: 16, vocab: 1000, seq_len: 2Ki, mla: {kv_lora_rank: "
                      "256}}",
                      "{dp: 32}", kBatch)),
      ElementsAre("s.yaml:3:77: error: model.mla: multi-head latent attention is modelled without linear "
                  "biases (DeepSeek's); set linear_bias: false"));
  EXPECT_THAT(errors(scenario("{preset: deepseek-v2-lite, mla: {rope_head_dim: 32}}", "{dp: 32}", kBatch)),
              ElementsAre());
  EXPECT_THAT(
      errors(scenario("{preset: llama3-8b, kv_heads: 32, mla: {rope_head_dim: 32}}", "{dp: 32}", kBatch)),
      ElementsAre("s.yaml:3:47: error: model.mla.kv_lora_rank: missing required key"));
  EXPECT_THAT(errors(scenario("{preset: deepseek-v2-lite, mla: {q_lora: 32}}", "{dp: 32}", kBatch)),
              ElementsAre("s.yaml:3:41: error: model.mla.q_lora: unknown key \"q_lora\""));
  EXPECT_THAT(
      errors(scenario("{layers: 4, hidden: 1024, heads: 16, vocab: 1000, seq_len: 128Ki, linear_bias: "
                      "false, attention: fused, mla: {kv_lora_rank: 256}}",
                      "{sp: 4, dp: 8, sequence_parallel: fpdt}", kBatch)),
      ElementsAre("s.yaml:5:48: error: parallelism.sequence_parallel: multi-head latent attention with "
                  "sequence_parallel: "
                  "fpdt is not modelled (the FPDT chunk loop projects standard Q/K/V); use ulysses or ring"));
}

}  // namespace
}  // namespace trainsim::config
