// Every class of input error, with the exact message and position users see.
#include <string_view>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "sim/config/loader.h"
#include "tests/config/config_test_util.h"

namespace trainsim::config {
namespace {

using ::testing::ElementsAre;
using trainsim::testing::errors_of;
using trainsim::testing::ScratchDir;

constexpr const char* kScenario = R"(schema_version: 1
name: s
model:
  preset: gpt3-125m
training:
  global_batch: 8
cluster:
  topology: topo.yaml
  hardware: hw.yaml
  gpus: 8
parallelism:
  dp: 8
)";

class LoaderErrors : public ::testing::Test {
 protected:
  LoaderErrors() { trainsim::testing::write_minimal_cluster(dir_); }
  std::vector<std::string> scenario_errors(const std::string& text, std::vector<std::string> sets = {}) {
    dir_.write("s.yaml", text);
    std::vector<Override> overrides;
    for (const std::string& s : sets) overrides.push_back(parse_override(s));
    return errors_of([&] { load_scenario("s.yaml", overrides); });
  }
  ScratchDir dir_;
};

TEST_F(LoaderErrors, ValidScenarioLoads) { EXPECT_TRUE(scenario_errors(kScenario).empty()); }

TEST_F(LoaderErrors, ThreeMistakesGiveThreeLocatedErrors) {
  EXPECT_THAT(
      scenario_errors(R"(schema_version: 1
name: s
model:
  preset: gpt3-125m
  layres: 12
training:
  micro_batch: 2
parallelism:
  dp: 8
  dp_bucket: 25
cluster: {topology: topo.yaml, hardware: hw.yaml, gpus: 8}
)"),
      ElementsAre("s.yaml:5:3: error: model.layres: unknown key \"layres\" (did you mean \"layers\"?)",
                  "s.yaml:7:3: error: training.global_batch: missing required key",
                  "s.yaml:10:14: error: parallelism.dp_bucket: expected a size with a unit, e.g. 80GiB; "
                  "\"25\" has no unit"));
}

TEST_F(LoaderErrors, SchemaVersionRequiredAndChecked) {
  EXPECT_THAT(scenario_errors("name: s\n"),
              ElementsAre("s.yaml:1:1: error: missing schema_version; every trainsim input starts with "
                          "schema_version: 1"));
  EXPECT_THAT(
      scenario_errors("schema_version: 2\nname: s\n"),
      ElementsAre("s.yaml:1:17: error: schema_version: unsupported schema_version 2; this trainsim reads "
                  "version 1 (a newer trainsim wrote it)"));
  EXPECT_THAT(scenario_errors("schema_version: one\n"),
              ElementsAre("s.yaml:1:17: error: schema_version: expected a whole number, got \"one\""));
}

TEST_F(LoaderErrors, SyntaxErrorIsLocated) {
  EXPECT_THAT(scenario_errors("schema_version: 1\nmodel: [1, 2\n"),
              ElementsAre("s.yaml:3:1: error: invalid YAML: end of sequence flow not found"));
}

TEST_F(LoaderErrors, TopLevelMustBeAMap) {
  EXPECT_THAT(scenario_errors("- 1\n- 2\n"),
              ElementsAre("s.yaml:1:1: error: expected a map of keys at the top level (a trainsim input file "
                          "starts with schema_version: 1)"));
}

TEST_F(LoaderErrors, DuplicateKey) {
  std::string text = kScenario;
  text += "name: again\n";
  EXPECT_THAT(
      scenario_errors(text),
      ElementsAre("s.yaml:13:1: error: name: duplicate key (the first value would be silently lost)"));
}

TEST_F(LoaderErrors, MissingSectionIsReportedOnceAtTheParent) {
  EXPECT_THAT(scenario_errors(
                  "schema_version: 1\nname: s\nmodel: {preset: gpt3-125m}\ntraining: {global_batch: 1}\n"),
              ElementsAre("s.yaml:1:1: error: cluster: missing required key"));
}

TEST_F(LoaderErrors, WrongShapeOfValue) {
  std::string text = kScenario;
  text.replace(text.find("global_batch: 8"), 15, "global_batch: {a: 1}");
  EXPECT_THAT(scenario_errors(text),
              ElementsAre("s.yaml:6:17: error: training.global_batch: expected a whole number, got a map"));
}

TEST_F(LoaderErrors, OutOfRangeAndBadEnum) {
  std::string text = kScenario;
  text += "  zero_stage: 4\n  schedule: 1f1f\n";
  EXPECT_THAT(
      scenario_errors(text),
      ElementsAre("s.yaml:13:15: error: parallelism.zero_stage: must be at most 3, got 4",
                  "s.yaml:14:13: error: parallelism.schedule: unknown value \"1f1f\" (did you mean "
                  "\"1f1b\"?); expected one of: gpipe, 1f1b, interleaved, zero-bubble, zb-v, dualpipev"));
}

TEST_F(LoaderErrors, UnknownPresetListsTheClosest) {
  std::string text = kScenario;
  text.replace(text.find("gpt3-125m"), 9, "llama3-8bb");
  const std::vector<std::string> errors = scenario_errors(text);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(
      errors[0].substr(0, 95),
      "s.yaml:4:11: error: model.preset: unknown model preset \"llama3-8bb\" (did you mean \"llama3-8b\"?)");
}

TEST_F(LoaderErrors, MissingReferencedFileIsReportedAtTheKey) {
  std::string text = kScenario;
  text.replace(text.find("topo.yaml"), 9, "nope/topo.yaml");
  EXPECT_THAT(
      scenario_errors(text),
      ElementsAre(
          "s.yaml:8:13: error: cluster.topology: cannot read file \"nope/topo.yaml\" (no such file)"));
}

TEST_F(LoaderErrors, ErrorsInAReferencedFileAreLocatedThere) {
  dir_.write("topo.yaml", "schema_version: 1\nname: t\nnode: {gpus: 8}\nfabric: {kind: torus}\n");
  EXPECT_THAT(
      scenario_errors(kScenario),
      ElementsAre("topo.yaml:3:7: error: node.intra: missing required key",
                  "topo.yaml:3:7: error: node.pcie: missing required key",
                  "topo.yaml:3:7: error: node.host_memory: missing required key",
                  "topo.yaml:4:9: error: fabric.link: missing required key",
                  "topo.yaml:4:9: error: fabric.dims: missing required key",
                  "topo.yaml:4:9: error: fabric: a torus fabric needs NICs: add node.nics {count, bandwidth, "
                  "latency}"));
}

TEST_F(LoaderErrors, ReferencesResolveRelativeToTheReferringFile) {
  dir_.write("sub/s.yaml", std::string(kScenario).replace(std::string(kScenario).find("topology: topo.yaml"),
                                                          19, "topology: ../topo.yaml"));
  const std::vector<std::string> errors = errors_of([] { load_scenario("sub/s.yaml"); });
  ASSERT_EQ(errors.size(), 1u);  // hw.yaml is looked up in sub/, where it is not
  EXPECT_EQ(errors[0],
            "sub/s.yaml:9:13: error: cluster.hardware: cannot read file \"sub/hw.yaml\" (no such file)");
}

TEST_F(LoaderErrors, ExtendsMergesMapsAndLocatesErrorsInTheParent) {
  dir_.write("base.yaml", std::string(kScenario) + "  tp: x\n");
  const std::vector<std::string> errors =
      scenario_errors("schema_version: 1\nextends: base.yaml\nname: child\ntraining: {global_batch: 16}\n");
  EXPECT_THAT(errors,
              ElementsAre("base.yaml:13:7: error: parallelism.tp: expected a whole number, got \"x\""));
  dir_.write("base.yaml", kScenario);
  dir_.write("s.yaml", "schema_version: 1\nextends: base.yaml\nname: child\ntraining: {global_batch: 16}\n");
  const Scenario s = load_scenario("s.yaml");
  EXPECT_EQ(s.name, "child");
  EXPECT_EQ(s.training.global_batch, 16);
  EXPECT_EQ(s.model.layers, 12);  // from the parent
  EXPECT_EQ(s.parallelism.dp, 8);
}

TEST_F(LoaderErrors, ExtendsCycleIsReported) {
  dir_.write("a.yaml", "schema_version: 1\nextends: b.yaml\n");
  dir_.write("b.yaml", "schema_version: 1\nextends: a.yaml\n");
  EXPECT_THAT(errors_of([] { load_scenario("a.yaml"); }),
              ElementsAre("b.yaml:2:10: error: extends: extends cycle: a.yaml -> b.yaml -> a.yaml"));
}

TEST_F(LoaderErrors, OverridesAreCheckedLikeFileContent) {
  EXPECT_THAT(
      scenario_errors(kScenario, {"parallelism.tp=abc", "model.layerz=3", "training.dtype=bf17"}),
      ElementsAre(
          "--set model.layerz=3:1:14: error: model.layerz: unknown key \"layerz\" (did you mean "
          "\"layers\"?)",
          "--set parallelism.tp=abc:1:16: error: parallelism.tp: expected a whole number, got \"abc\"",
          "--set training.dtype=bf17:1:16: error: training.dtype: unknown value \"bf17\" (did you "
          "mean \"bf16\"?); expected one of: fp64, fp32, tf32, bf16, fp16, fp8"));
}

TEST_F(LoaderErrors, OverridesWinOverTheFile) {
  dir_.write("s.yaml", kScenario);
  const Scenario s =
      load_scenario("s.yaml", {parse_override("model.seq_len=4Ki"), parse_override("parallelism.dp=4"),
                               parse_override("cluster.gpus=4")});
  EXPECT_EQ(s.model.seq_len, 4096);
  EXPECT_EQ(s.parallelism.dp, 4);
}

// Every override survives, however many there are, and the last one for a key wins.
TEST_F(LoaderErrors, ManyOverridesAllApply) {
  dir_.write("s.yaml", kScenario);
  const Scenario s =
      load_scenario("s.yaml", {parse_override("model.seq_len=4Ki"), parse_override("parallelism.dp=2"),
                               parse_override("training.global_batch=16"), parse_override("cluster.gpus=4"),
                               parse_override("parallelism.tp=2"), parse_override("training.micro_batch=2"),
                               parse_override("model.seq_len=1Ki")});
  EXPECT_EQ(s.model.seq_len, 1024);
  EXPECT_EQ(s.parallelism.dp, 2);
  EXPECT_EQ(s.parallelism.tp, 2);
  EXPECT_EQ(s.training.global_batch, 16);
  EXPECT_EQ(s.training.micro_batch, 2);
  EXPECT_EQ(s.cluster.gpus, 4);
}

TEST_F(LoaderErrors, MalformedOverrideArgument) {
  EXPECT_THAT(errors_of([] { parse_override("parallelism.tp"); }),
              ElementsAre("--set parallelism.tp:1:1: error: expected --set dotted.key=value"));
  EXPECT_THAT(
      errors_of([] { parse_override("a..b=1"); }),
      ElementsAre("--set a..b=1:1:1: error: a..b: expected a dotted key such as parallelism.tp before '='"));
}

TEST_F(LoaderErrors, EveryHardwareNumberNeedsASource) {
  dir_.write("hw.yaml", R"(schema_version: 1
name: gpu
gpu:
  name: Test GPU
  peak_flops: {bf16: 312TFLOP/s}
  hbm: {capacity: 80GiB, bandwidth: 2TB/s}
host_link: {h2d_bandwidth: 25GB/s, d2h_bandwidth: 25GB/s}
provenance: {kind: cited}
sources:
  gpu: datasheet
  host_link.h2d_bandwidth: measured
  gpu.hbm.capcity: typo
)");
  EXPECT_THAT(
      errors_of([] { load_hardware("hw.yaml"); }),
      ElementsAre(
          "hw.yaml:7:51: error: host_link.d2h_bandwidth: no source for this value; add "
          "`host_link.d2h_bandwidth: <datasheet, paper or \"measured\">` "
          "under sources",
          "hw.yaml:12:20: error: sources.gpu.hbm.capcity: sources names \"gpu.hbm.capcity\", which is "
          "not a key of this profile (did you mean \"gpu.hbm.capacity\"?)"));
}

// A cited profile with the fewest keys, `section` on its line 8 and `more_sources` (whole lines) after
// its two sources.
std::string minimal_profile(std::string_view section, std::string_view more_sources) {
  return fmt::format(R"(schema_version: 1
name: gpu
gpu:
  name: Test GPU
  peak_flops: {{bf16: 312TFLOP/s}}
  hbm: {{capacity: 80GiB, bandwidth: 2TB/s}}
host_link: {{h2d_bandwidth: 25GB/s, d2h_bandwidth: 25GB/s}}
{}
provenance: {{kind: cited}}
sources:
  gpu: datasheet
  host_link: measured
{})",
                     section, more_sources);
}

TEST_F(LoaderErrors, TheAttentionKernelIsOneTheCostModelKnows) {
  const auto profile = [](std::string_view kernel) {
    return minimal_profile(fmt::format("compute: {{attention_kernel: {}}}", kernel), "  compute: paper\n");
  };
  dir_.write("hw.yaml", profile("flash-attention-4"));
  EXPECT_THAT(
      errors_of([] { load_hardware("hw.yaml"); }),
      ElementsAre("hw.yaml:8:29: error: compute.attention_kernel: unknown value \"flash-attention-4\" "
                  "(did you mean \"flash-attention-2\"?); expected one of: mma.sync, wgmma, "
                  "flash-attention-2, flash-attention-3"));
  dir_.write("hw.yaml", profile("flash-attention-2"));
  EXPECT_EQ(load_hardware("hw.yaml").compute.attention_kernel, FusedAttentionKernel::kFlashAttention2);
}

TEST_F(LoaderErrors, RuntimeMemoryIsBytesWithSources) {
  const auto profile = [](std::string_view runtime_memory, std::string_view more_sources) {
    return minimal_profile(fmt::format("runtime_memory: {}", runtime_memory), more_sources);
  };
  dir_.write("hw.yaml",
             profile("{context: -300MB, collective_comunicator: 688MB, p2p_peer_in_node: 469}", ""));
  EXPECT_THAT(
      errors_of([] { load_hardware("hw.yaml"); }),
      ElementsAre("hw.yaml:8:27: error: runtime_memory.context: a size must be finite and not negative, "
                  "got \"-300MB\"",
                  "hw.yaml:8:27: error: runtime_memory: no source for this section; add `runtime_memory: "
                  "<datasheet, paper or \"measured\">` under sources",
                  "hw.yaml:8:35: error: runtime_memory.collective_comunicator: unknown key "
                  "\"collective_comunicator\" (did you mean \"collective_communicator\"?)",
                  "hw.yaml:8:84: error: runtime_memory.p2p_peer_in_node: expected a size with a unit, e.g. "
                  "80GiB; \"469\" has no unit"));
  dir_.write("hw.yaml", profile("{context: 300MB, p2p_peer_across_nodes: 29MB}",
                                "  runtime_memory: \"NVIDIA/nccl issue #964\"\n"));
  const HardwareProfile h = load_hardware("hw.yaml");
  ASSERT_TRUE(h.runtime_memory.has_value());
  EXPECT_DOUBLE_EQ(h.runtime_memory->context_bytes, 300e6);
  EXPECT_DOUBLE_EQ(h.runtime_memory->collective_communicator_bytes, 0);
  EXPECT_DOUBLE_EQ(h.runtime_memory->p2p_peer_across_nodes_bytes, 29e6);
  EXPECT_EQ(h.source_of("runtime_memory.context"), "NVIDIA/nccl issue #964");
}

TEST_F(LoaderErrors, TopologyRulesPerFabricKind) {
  dir_.write("t.yaml", R"(schema_version: 1
name: t
node:
  gpus: 8
  intra: {kind: nvswitch, bandwidth: 300GB/s, latency: 1us}
  pcie: {bandwidth: 32GB/s, latency: 1us}
  nics: {count: 4, bandwidth: 200Gbps, latency: 1us}
  host_memory: 1TiB
fabric:
  kind: rail-optimized
  nodes: 4
  groups: 2
  link: {bandwidth: 200Gbps, latency: 0.1us}
)");
  EXPECT_THAT(
      errors_of([] { load_topology("t.yaml"); }),
      ElementsAre(
          "t.yaml:10:3: error: fabric: a rail-optimized fabric puts NIC i of every node on rail i and "
          "needs one NIC per GPU; node has 8 GPUs and 4 NICs",
          "t.yaml:12:3: error: fabric.groups: unknown key \"groups\""));
}

TEST_F(LoaderErrors, RoutingRules) {
  const auto topology = [&](const std::string& kind, const std::string& fabric_extra,
                            const std::string& link = "400Gbps") {
    dir_.write("t.yaml", fmt::format(R"(schema_version: 1
name: t
node:
  gpus: 8
  intra: {{kind: nvswitch, bandwidth: 300GB/s, latency: 1us}}
  pcie: {{bandwidth: 32GB/s, latency: 1us}}
  nics: {{count: 8, bandwidth: 400Gbps, latency: 1us}}
  host_memory: 1TiB
fabric:
  kind: {}
  link: {{bandwidth: {}, latency: 0.1us}}
{})",
                                     kind, link, fabric_extra));
    return errors_of([] { load_topology("t.yaml"); });
  };
  EXPECT_THAT(topology("fat-tree", "  nodes: 4\n  routing: ecmp\n  ecmp_seed: 3\n"), ElementsAre());
  EXPECT_THAT(topology("fat-tree", "  nodes: 4\n  routing: emcp\n"),
              ElementsAre("t.yaml:13:12: error: fabric.routing: unknown value \"emcp\" (did you mean "
                          "\"ecmp\"?); expected one of: adaptive, ecmp, d-mod-k"));
  EXPECT_THAT(topology("rail-optimized", "  nodes: 4\n  ecmp_seed: 3\n"),
              ElementsAre("t.yaml:13:14: error: fabric.ecmp_seed: ecmp_seed seeds the ECMP hash and has no "
                          "effect with routing: adaptive; set routing: ecmp or remove it"));
  EXPECT_THAT(topology("fat-tree", "  nodes: 4\n  routing: d-mod-k\n  ecmp_seed: 3\n"),
              ElementsAre("t.yaml:14:14: error: fabric.ecmp_seed: ecmp_seed seeds the ECMP hash and has no "
                          "effect with routing: d-mod-k; set routing: ecmp or remove it"));
  EXPECT_THAT(
      topology("torus", "  dims: [2, 2]\n  routing: ecmp\n"),
      ElementsAre("t.yaml:13:12: error: fabric.routing: routing applies to fat-tree and rail-optimized "
                  "fabrics; a torus fabric routes minimally over its own links; remove it"));
  // 2^17 nodes x 8 NICs of 400 Gb/s over 100 Gb/s cables: 4 cables per NIC (and a partial one per
  // trunk at most) on each of the two levels above the leaves.
  EXPECT_THAT(
      topology("fat-tree", "  nodes: 131072\n  levels: 3\n  routing: ecmp\n", "100Gbps"),
      ElementsAre("t.yaml:14:12: error: fabric.routing: routing ecmp makes every cable between switch levels "
                  "a link of its own; 131072 nodes x 8 NICs of 50GB/s over fabric links of 12.5GB/s need up "
                  "to 10485760 cables, above the limit of 4194304; give fabric.link the bandwidth of one "
                  "real cable, or use routing: adaptive"));
}

TEST_F(LoaderErrors, FileKindDetection) {
  EXPECT_EQ(detect_file_kind("topo.yaml"), FileKind::kTopology);
  EXPECT_EQ(detect_file_kind("hw.yaml"), FileKind::kHardware);
  dir_.write("s.yaml", kScenario);
  EXPECT_EQ(detect_file_kind("s.yaml"), FileKind::kScenario);
  dir_.write("c.yaml", "schema_version: 1\ntopology: topo.yaml\njobs: []\n");
  EXPECT_EQ(detect_file_kind("c.yaml"), FileKind::kCluster);
  dir_.write("v.yaml", "schema_version: 1\nvalidation: {id: a}\nscenario: {file: s.yaml}\n");
  EXPECT_EQ(detect_file_kind("v.yaml"), FileKind::kValidationCase);
  dir_.write("suite.yaml", "schema_version: 1\nsuite: a\n");
  EXPECT_EQ(detect_file_kind("suite.yaml"), FileKind::kValidationSuite);
  dir_.write("w.yaml", "schema_version: 1\nbase: s.yaml\naxes: []\n");
  EXPECT_EQ(detect_file_kind("w.yaml"), FileKind::kSweep);
  dir_.write("n.yaml", "schema_version: 1\nname: ib\ntier: inter_node\n");
  EXPECT_EQ(detect_file_kind("n.yaml"), FileKind::kNetworkPart);
  dir_.write("x.yaml", "schema_version: 1\nfoo: 1\n");
  EXPECT_THAT(
      errors_of([] { detect_file_kind("x.yaml"); }),
      ElementsAre("x.yaml:1:1: error: cannot tell what kind of file this is: a scenario has "
                  "model/training/parallelism/cluster, a topology has node/fabric, a hardware profile has "
                  "gpu/host_link (a stack profile: stack), a cluster file has jobs, a validation case "
                  "validation, a validation suite suite, a sweep axes, a network part tier, an accuracy file "
                  "regimes"));
}

}  // namespace
}  // namespace trainsim::config

namespace trainsim::config {
namespace {

TEST_F(LoaderErrors, MeasuredTablesDecodeAndNeedSources) {
  const std::string base = R"(schema_version: 1
name: gpu
gpu:
  name: Test GPU
  peak_flops: {bf16: 312TFLOP/s}
  hbm: {capacity: 80GiB, bandwidth: 2TB/s}
host_link: {h2d_bandwidth: 25GB/s, d2h_bandwidth: 25GB/s}
compute: {gemm_efficiency: 0.87, kernel_launch: 4us}
gemm_samples:
  - {dtype: bf16, m: 4096, n: 4096, k: 4096, time: 500us}
  - {dtype: bf16, m: 1024, n: 4096}
collective_fits:
  - {kind: all_reduce, ranks: 8, min_bytes: 0B, max_bytes: 64KiB, latency: 20us, bus_bandwidth: 100GB/s}
provenance: {kind: measured}
sources:
  gpu: datasheet
  host_link: measured
  compute: measured
)";
  dir_.write("hw.yaml", base);
  EXPECT_THAT(
      errors_of([] { load_hardware("hw.yaml"); }),
      ElementsAre("hw.yaml:10:13: error: gemm_samples: no source for this section; add `gemm_samples: "
                  "<datasheet, paper or \"measured\">` under sources",
                  "hw.yaml:11:5: error: gemm_samples[1].k: missing required key",
                  "hw.yaml:11:5: error: gemm_samples[1].time: missing required key",
                  "hw.yaml:13:12: error: collective_fits: no source for this section; add `collective_fits: "
                  "<datasheet, paper or \"measured\">` under sources"));
  dir_.write("hw.yaml", base + "  gemm_samples: measured\n  collective_fits: measured\n");
  EXPECT_THAT(errors_of([] { load_hardware("hw.yaml"); }),
              ElementsAre("hw.yaml:11:5: error: gemm_samples[1].k: missing required key",
                          "hw.yaml:11:5: error: gemm_samples[1].time: missing required key"));
  std::string fixed = base + "  gemm_samples: measured\n  collective_fits: measured\n";
  fixed.replace(fixed.find("{dtype: bf16, m: 1024, n: 4096}"), 31,
                "{dtype: bf16, m: 1024, n: 4096, k: 512, time: 40us}");
  dir_.write("hw.yaml", fixed);
  const HardwareProfile h = load_hardware("hw.yaml");
  ASSERT_EQ(h.gemm_samples.size(), 2u);
  EXPECT_EQ(h.gemm_samples[1].k, 512);
  EXPECT_DOUBLE_EQ(h.gemm_samples[1].duration_s, 40e-6);
  ASSERT_EQ(h.collective_fits.size(), 1u);
  EXPECT_EQ(h.collective_fits[0].kind, CollectiveKind::kAllReduce);
  EXPECT_DOUBLE_EQ(h.collective_fits[0].max_bytes, 65536);
  EXPECT_DOUBLE_EQ(h.compute.gemm_efficiency, 0.87);
  EXPECT_EQ(h.source_of("gemm_samples[1].time"), "measured");
}

}  // namespace
}  // namespace trainsim::config

namespace trainsim::config {
namespace {

constexpr const char* kMeasuredProfile = R"(schema_version: 1
name: gpu
gpu:
  name: Test GPU
  peak_flops: {bf16: 312TFLOP/s}
  hbm: {capacity: 80GiB, bandwidth: 2TB/s}
host_link: {h2d_bandwidth: 25GB/s, d2h_bandwidth: 25GB/s}
gemm_samples:
  - {dtype: bf16, m: 4096, n: 4096, k: 4096, time: 500us, min: 490us, p90: 512us, repetitions: 8}
collective_samples:
  - {kind: all_reduce, ranks: 8, bytes: 1MiB, time: 40us, repetitions: 10}
copy_samples:
  - {direction: h2d, bytes: 1GiB, time: 20ms, min: 19.5ms}
provenance:
  kind: measured
  software: {driver: 580.159.04, cuda_runtime: 13.0, blas: 13.1.0, collectives: 2.28.9}
  host: {cpu: "Intel(R) Xeon(R) Processor", name: node01}
sources:
  gpu: datasheet
  host_link: measured
  gemm_samples: measured
  collective_samples: measured
  copy_samples: measured
)";

TEST_F(LoaderErrors, SampleSpreadAndSoftwareAreTypedAndOptional) {
  dir_.write("hw.yaml", kMeasuredProfile);
  const HardwareProfile h = load_hardware("hw.yaml");
  ASSERT_EQ(h.gemm_samples.size(), 1u);
  EXPECT_DOUBLE_EQ(h.gemm_samples[0].spread.min_s, 490e-6);
  EXPECT_DOUBLE_EQ(h.gemm_samples[0].spread.p90_s, 512e-6);
  EXPECT_EQ(h.gemm_samples[0].spread.repetitions, 8);
  EXPECT_EQ(h.collective_samples[0].spread.repetitions, 10);
  EXPECT_EQ(h.collective_samples[0].spread.min_s, 0) << "not recorded";
  EXPECT_DOUBLE_EQ(h.copy_samples[0].spread.min_s, 19.5e-3);
  EXPECT_EQ(h.provenance.software.driver, "580.159.04");
  EXPECT_EQ(h.provenance.software.cuda_runtime, "13.0");
  EXPECT_EQ(h.provenance.software.blas, "13.1.0");
  EXPECT_EQ(h.provenance.software.collectives, "2.28.9");
  EXPECT_EQ(h.provenance.software.compiler, "");
  EXPECT_EQ(h.provenance.host.cpu, "Intel(R) Xeon(R) Processor");
  EXPECT_EQ(h.provenance.host.name, "node01");
}

TEST_F(LoaderErrors, BadSpreadAndSoftwareValuesAreLocated) {
  std::string text = kMeasuredProfile;
  const auto replace = [&text](const std::string& from, const std::string& to) {
    text.replace(text.find(from), from.size(), to);
  };
  replace("min: 490us", "min: 490");
  replace("p90: 512us", "p90: 400us");
  replace("repetitions: 10}", "repetitions: 0}");
  replace("min: 19.5ms", "min: 21ms");
  replace("driver: 580.159.04", "driver: [580]");
  replace("name: node01", "nmae: node01");
  dir_.write("hw.yaml", text);
  EXPECT_THAT(
      errors_of([] { load_hardware("hw.yaml"); }),
      ElementsAre(
          "hw.yaml:9:64: error: gemm_samples[0].min: expected a duration with a unit, e.g. 1.5us; "
          "\"490\" has no unit",
          "hw.yaml:9:74: error: gemm_samples[0].p90: must be at least time (0.5ms), got 400us: p90 is "
          "the 90th percentile of the repetitions, time their median",
          "hw.yaml:11:72: error: collective_samples[0].repetitions: must be at least 1, got 0",
          "hw.yaml:13:52: error: copy_samples[0].min: must be at most time (20ms), got 21ms: min is the "
          "fastest repetition, time their median",
          "hw.yaml:16:22: error: provenance.software.driver: expected a string, got a list",
          "hw.yaml:17:45: error: provenance.host.nmae: unknown key \"nmae\" (did you mean \"name\"?)"));
}

}  // namespace
}  // namespace trainsim::config
