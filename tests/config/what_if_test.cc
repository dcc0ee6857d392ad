// What-ifs: a scenario's cluster.topology_set and cluster.hardware_set (and --set on them) change the
// files' values, are listed with where they were written, and every mistake in them is located there.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "sim/config/emit.h"
#include "sim/config/loader.h"
#include "tests/config/config_test_util.h"

namespace trainsim::config {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using trainsim::testing::errors_of;
using trainsim::testing::ScratchDir;

// The minimal cluster with `cluster_lines` (indented by two) added to the scenario's cluster section,
// from line 10.
class WhatIfTest : public ::testing::Test {
 protected:
  WhatIfTest() { trainsim::testing::write_minimal_cluster(dir_); }
  Scenario load(const std::string& cluster_lines, const std::vector<std::string>& sets = {}) {
    write(cluster_lines);
    std::vector<Override> overrides;
    for (const std::string& s : sets) overrides.push_back(parse_override(s));
    return load_scenario("s.yaml", overrides);
  }
  std::vector<std::string> errors(const std::string& cluster_lines) {
    write(cluster_lines);
    return errors_of([] { load_scenario("s.yaml"); });
  }

  ScratchDir dir_;

 private:
  void write(const std::string& cluster_lines) {
    dir_.write("s.yaml",
               "schema_version: 1\nname: s\nmodel: {preset: gpt3-125m}\ntraining: {global_batch: 8}\n"
               "parallelism: {dp: 8}\ncluster:\n  topology: topo.yaml\n  hardware: hw.yaml\n  gpus: 8\n" +
                   cluster_lines);
  }
};

TEST_F(WhatIfTest, TheFilesAsTheyAreHaveNone) {
  const Scenario s = load("");
  EXPECT_THAT(s.cluster.topology.what_if, IsEmpty());
  EXPECT_THAT(s.cluster.hardware.what_if, IsEmpty());
  EXPECT_DOUBLE_EQ(s.cluster.topology.fabric.oversubscription, 1);
}

TEST_F(WhatIfTest, TopologySetChangesTheTopologyAndListsWhereItWasWritten) {
  const Scenario s = load(
      "  topology_set:\n    fabric: {oversubscription: 2, routing: ecmp}\n    node: {nics: {bandwidth: "
      "400Gbps}}\n");
  EXPECT_DOUBLE_EQ(s.cluster.topology.fabric.oversubscription, 2);
  EXPECT_EQ(s.cluster.topology.fabric.routing, FabricRouting::kEcmp);
  EXPECT_DOUBLE_EQ(s.cluster.topology.node.nics.link.bandwidth_bytes_per_s, 50e9);
  EXPECT_DOUBLE_EQ(s.cluster.topology.node.nics.link.latency_s, 1e-6);  // the file's, merged
  EXPECT_EQ(s.cluster.topology.name, "tiny");
  ASSERT_EQ(s.cluster.topology.what_if.size(), 3u);
  const WhatIf& w = s.cluster.topology.what_if[0];
  EXPECT_EQ(w.key, "fabric.oversubscription");
  EXPECT_EQ(w.value, "2");
  EXPECT_EQ(fmt::format("{}:{}:{}", w.where.file, w.where.line, w.where.column), "s.yaml:11:32");
  EXPECT_EQ(s.cluster.topology.what_if[2].key, "node.nics.bandwidth");
  EXPECT_EQ(s.cluster.topology.what_if[2].value, "400Gbps");
  EXPECT_THAT(s.cluster.hardware.what_if, IsEmpty());
}

TEST_F(WhatIfTest, HardwareSetNeedsNoSourceOfItsOwn) {
  // hw.yaml cites gpu and host_link only: compute is the what-if's.
  const Scenario s =
      load("  hardware_set: {gpu: {hbm: {capacity: 141GB}}, compute: {gemm_efficiency: 0.7}}\n");
  EXPECT_DOUBLE_EQ(s.cluster.hardware.gpu.hbm_capacity_bytes, 141e9);
  EXPECT_DOUBLE_EQ(s.cluster.hardware.gpu.hbm_bandwidth_bytes_per_s, 2e12);
  EXPECT_DOUBLE_EQ(s.cluster.hardware.compute.gemm_efficiency, 0.7);
  ASSERT_EQ(s.cluster.hardware.what_if.size(), 2u);
  EXPECT_EQ(s.cluster.hardware.what_if[0].key, "gpu.hbm.capacity");  // in the order written
  EXPECT_EQ(s.cluster.hardware.what_if[1].key, "compute.gemm_efficiency");
}

TEST_F(WhatIfTest, SetOnTheCommandLineWinsAndIsLocatedThere) {
  const Scenario s = load("  topology_set: {fabric: {oversubscription: 2}}\n",
                          {"cluster.topology_set.fabric.oversubscription=4"});
  EXPECT_DOUBLE_EQ(s.cluster.topology.fabric.oversubscription, 4);
  ASSERT_EQ(s.cluster.topology.what_if.size(), 1u);
  EXPECT_EQ(s.cluster.topology.what_if[0].where.file, "--set cluster.topology_set.fabric.oversubscription=4");
}

TEST_F(WhatIfTest, ShownYamlCarriesTheWhatIfsAndLoadsBack) {
  const Scenario s = load(
      "  topology_set: {fabric: {routing: ecmp, ecmp_seed: 3}}\n  hardware_set: {gpu: {peak_flops: {bf16: "
      "400TFLOP/s}}}\n");
  const std::string yaml = to_yaml(s);
  EXPECT_THAT(yaml,
              ::testing::HasSubstr("topology_set:\n    fabric:\n      ecmp_seed: 3\n      routing: ecmp\n"));
  EXPECT_THAT(yaml,
              ::testing::HasSubstr("hardware_set:\n    gpu:\n      peak_flops:\n        bf16: 400TFLOP/s\n"));
  dir_.write("shown.yaml", yaml);
  const Scenario back = load_scenario("shown.yaml");
  EXPECT_EQ(to_yaml(back), yaml);
  EXPECT_EQ(back.cluster.topology.fabric.ecmp_seed, 3);
  EXPECT_DOUBLE_EQ(*back.cluster.hardware.peak_flops_per_s(Dtype::kBf16), 400e12);
}

TEST_F(WhatIfTest, MistakesAreLocatedWhereTheScenarioWroteThem) {
  EXPECT_THAT(errors("  topology_set: 2\n"),
              ElementsAre("s.yaml:10:17: error: cluster.topology_set: expected a map of topology keys to set "
                          "over the file, e.g. topology_set: {fabric: {oversubscription: 2}}"));
  EXPECT_THAT(
      errors("  topology_set: {fabric.oversubscription: 2, extends: other.yaml}\n"),
      ElementsAre("s.yaml:10:43: error: cluster.topology_set.fabric.oversubscription: write nested "
                  "keys here, e.g. fabric: {oversubscription: ...}; dotted keys are the spelling of "
                  "--set and sweep axes",
                  "s.yaml:10:55: error: cluster.topology_set.extends: extends belongs to the topology "
                  "file itself; set values of it here, or name another file"));
  EXPECT_THAT(
      errors("  topology_set: {fabric: {oversubscripton: 2, link: {bandwidth: 0Gbps}}}\n"
             "  hardware_set: {gpu: {hbm: {capacity: 80}}}\n"),
      ElementsAre("s.yaml:10:27: error: fabric.oversubscripton: unknown key \"oversubscripton\" (did "
                  "you mean \"oversubscription\"?)",
                  "s.yaml:10:65: error: fabric.link.bandwidth: a bandwidth of 0 never delivers a byte: every "
                  "transfer over this link would wait forever; give its real bandwidth per direction, "
                  "e.g. 400Gbps",
                  "s.yaml:11:40: error: gpu.hbm.capacity: expected a size with a unit, e.g. 80GiB; "
                  "\"80\" has no unit"));
}

}  // namespace
}  // namespace trainsim::config
