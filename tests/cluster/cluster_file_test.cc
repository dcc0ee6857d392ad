// Cluster files: the jobs' scenarios on the cluster, their nodes, and every mistake located.
#include "sim/cluster/cluster_file.h"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/config/config_test_util.h"

namespace trainsim::cluster {
namespace {

using ::testing::ElementsAre;
using trainsim::testing::errors_of;
using trainsim::testing::ScratchDir;

// The minimal test cluster (4 nodes of 8 GPUs) and s.yaml, a small GPT on 16 GPUs of it.
class ClusterFileTest : public ::testing::Test {
 protected:
  ClusterFileTest() {
    trainsim::testing::write_minimal_cluster(dir_);
    dir_.write("s.yaml",
               "schema_version: 1\nname: small\nmodel: {layers: 4, hidden: 1024, heads: 16, vocab: 128, "
               "seq_len: 1024}\ntraining: {global_batch: 16}\ncluster: {topology: topo.yaml, hardware: "
               "hw.yaml, gpus: 16}\n");
  }
  // c.yaml: the cluster's keys, then `jobs` as given (YAML lines, indented by two).
  ClusterFile load(const std::string& jobs, const std::string& extra = "") {
    write(jobs, extra);
    return load_cluster("c.yaml");
  }
  std::vector<std::string> errors(const std::string& jobs, const std::string& extra = "") {
    write(jobs, extra);
    return errors_of([] { load_cluster("c.yaml"); });
  }

  ScratchDir dir_;

 private:
  void write(const std::string& jobs, const std::string& extra) {
    dir_.write("c.yaml", "schema_version: 1\nname: c\ntopology: topo.yaml\nhardware: hw.yaml\n" + extra +
                             "jobs:\n" + jobs);
  }
};

TEST_F(ClusterFileTest, JobsRunTheirScenariosOnTheClustersNodes) {
  const ClusterFile c = load(
      "  - {scenario: s.yaml}\n  - {scenario: s.yaml, name: other, nodes: [3], "
      "start: 20ms, set: {parallelism.tp: 8}}\n");
  ASSERT_EQ(c.jobs.size(), 2u);
  EXPECT_EQ(c.jobs[0].name, "small");  // the scenario's
  EXPECT_EQ(c.jobs[0].scenario.cluster.gpus, 16);
  EXPECT_EQ(c.jobs[0].nodes, (std::vector<int64_t>{0, 1}));  // packed on the nodes nobody lists
  EXPECT_EQ(c.jobs[1].scenario.cluster.gpus, 8);             // one node
  EXPECT_EQ(c.jobs[1].scenario.parallelism.tp, 8);
  EXPECT_EQ(c.jobs[1].nodes, (std::vector<int64_t>{3}));
  EXPECT_DOUBLE_EQ(c.jobs[1].start_s, 0.02);
  EXPECT_EQ(c.jobs[1].scenario.cluster.topology.name, "tiny");
  EXPECT_EQ(c.idle_nodes(), (std::vector<int64_t>{2}));
  EXPECT_EQ(c.jobs[0].scenario.path.filename(), "s.yaml");
}

TEST_F(ClusterFileTest, PlacementsDealTheFreeNodes) {
  const std::string jobs = "  - {scenario: s.yaml, name: a}\n  - {scenario: s.yaml, name: b}\n";
  EXPECT_EQ(load(jobs, "placement: interleaved\n").jobs[1].nodes, (std::vector<int64_t>{1, 3}));
  const ClusterFile r = load(jobs, "placement: random\nseed: 3\n");
  EXPECT_EQ(r.jobs[0].nodes.size() + r.jobs[1].nodes.size(), 4u);
  EXPECT_EQ(r.jobs[0].nodes, load(jobs, "placement: random\nseed: 3\n").jobs[0].nodes);
}

TEST_F(ClusterFileTest, RanksFillTheirNodesInTheOrderListed) {
  const ClusterFile c = load("  - {scenario: s.yaml, nodes: [3, 1]}\n");
  const std::vector<int64_t> gpus = c.gpu_of_rank(0);
  ASSERT_EQ(gpus.size(), 16u);
  EXPECT_EQ(gpus[0], 24);
  EXPECT_EQ(gpus[7], 31);
  EXPECT_EQ(gpus[8], 8);
  EXPECT_EQ(gpus[15], 15);
  EXPECT_EQ(node_ranges({7, 0, 1, 2, 5, 6}), "0-2, 5-7");
}

TEST_F(ClusterFileTest, EveryMistakeIsLocated) {
  EXPECT_THAT(
      errors("  - {scenaro: s.yaml}\n  - {scenario: s.yaml, gpus: 12}\n"
             "  - {scenario: s.yaml, nodes: [2-1, 7]}\n  - {scenario: s.yaml, start: 5}\n",
             "placement: packd\n"),
      ElementsAre("c.yaml:5:12: error: placement: unknown value \"packd\" (did you mean \"packed\"?); "
                  "expected one of: packed, interleaved, spread, random",
                  "c.yaml:7:5: error: jobs[0].scenario: missing required key",
                  "c.yaml:7:6: error: jobs[0].scenaro: unknown key \"scenaro\" (did you mean "
                  "\"scenario\"?)",
                  "c.yaml:8:30: error: jobs[1].gpus: a job takes whole nodes: 12 GPUs is not a multiple "
                  "of the 8 GPUs of a node of tiny; give gpus: as a multiple of 8",
                  "c.yaml:9:32: error: jobs[2].nodes[0]: the run 2-1 goes backwards; write the lower "
                  "node first",
                  "c.yaml:9:37: error: jobs[2].nodes[1]: node 7 is not in the cluster: tiny has nodes 0 "
                  "to 3",
                  "c.yaml:10:31: error: jobs[3].start: expected a duration with a unit, e.g. 1.5us; "
                  "\"5\" has no unit"));
}

TEST_F(ClusterFileTest, NodesAreTheClustersAndHeldOnce) {
  EXPECT_THAT(
      errors("  - {scenario: s.yaml, name: a, nodes: [0, 1]}\n  - {scenario: s.yaml, name: b, "
             "nodes: [1-2]}\n  - {scenario: s.yaml, name: c, nodes: [3, 4]}\n"),
      ElementsAre("c.yaml:7:41: error: jobs[1].nodes[0]: node 1 is also held by job a; a node runs "
                  "one job",
                  "c.yaml:8:44: error: jobs[2].nodes[1]: node 4 is not in the cluster: tiny has nodes "
                  "0 to 3"));
  EXPECT_THAT(
      errors("  - {scenario: s.yaml, gpus: 16, nodes: [0, 1, 2]}\n"),
      ElementsAre("c.yaml:6:41: error: jobs[0].nodes: 3 nodes hold 24 GPUs but the job has 16; list 2 "
                  "nodes"));
  EXPECT_THAT(errors("  - {scenario: s.yaml, name: a}\n  - {scenario: s.yaml, name: b}\n"
                     "  - {scenario: s.yaml, name: c}\n"),
              ElementsAre("c.yaml:6:3: error: jobs: the jobs without a nodes: list need 6 nodes but 4 of the "
                          "cluster's 4 are free"));
}

TEST_F(ClusterFileTest, SettingsAreCheckedAtTheJob) {
  EXPECT_THAT(
      errors("  - {scenario: s.yaml, set: {cluster.gpus: 8, stragglers.slow_nics: [], "
             "parallelism.tp: 3}}\n"),
      ElementsAre("c.yaml:6:44: error: jobs[0].set.cluster.gpus: a job runs on the cluster file's "
                  "topology and hardware; give the job gpus: or nodes: instead of setting cluster keys",
                  "c.yaml:6:69: error: jobs[0].set.stragglers.slow_nics: slow NICs belong to nodes of "
                  "the cluster, not to one job; a cluster file does not take them"));
  // A rule the job breaks on its own keys is named at the job as well.
  const std::vector<std::string> rule = errors("  - {scenario: s.yaml, gpus: 24}\n");
  ASSERT_EQ(rule.size(), 2u);
  EXPECT_EQ(rule[0],
            "c.yaml:6:16: error: jobs[0].scenario: the scenario does not hold as this job (24 GPUs "
            "of tiny): see s.yaml");
  EXPECT_THAT(rule[1], ::testing::StartsWith("s.yaml:"));
  EXPECT_THAT(
      errors("  - {scenario: s.yaml, name: a}\n  - {scenario: s.yaml, name: a}\n"),
      ElementsAre("c.yaml:7:30: error: jobs[1].name: two jobs are named a; give one a name: of its own"));
}

TEST_F(ClusterFileTest, TheClusterIsOneTopologyAndOneGpuKind) {
  dir_.write("c.yaml", "schema_version: 1\ntopology: none.yaml\njobs: []\n");
  EXPECT_THAT(
      errors_of([] { load_cluster("c.yaml"); }),
      ElementsAre("c.yaml:1:1: error: hardware: missing required key",
                  "c.yaml:2:11: error: topology: cannot read the topology \"none.yaml\" (no such file)",
                  "c.yaml:3:7: error: jobs: expected a list of jobs, e.g. jobs: [{scenario: a.yaml}, "
                  "{scenario: b.yaml}]"));
  dir_.write(
      "slow.yaml",
      "schema_version: 1\nextends: s.yaml\nstragglers: {slow_nics: [{nodes: [1], bandwidth: 50Gbps}]}\n");
  EXPECT_THAT(
      errors("  - {scenario: slow.yaml}\n"),
      ElementsAre("c.yaml:6:16: error: jobs[0].scenario: the scenario has stragglers.slow_nics, which "
                  "belong to nodes of the cluster, not to one job; a cluster file does not take them"));
}

TEST_F(ClusterFileTest, TheClustersWhatIfsHoldForEveryJob) {
  const ClusterFile c = load("  - {scenario: s.yaml, name: a}\n  - {scenario: s.yaml, name: b}\n",
                             "topology_set: {fabric: {oversubscription: 2}}\nhardware_set: {gpu: {hbm: "
                             "{capacity: 40GiB}}}\n");
  EXPECT_DOUBLE_EQ(c.topology.fabric.oversubscription, 2);
  ASSERT_EQ(c.jobs.size(), 2u);
  for (const ClusterJob& job : c.jobs) {
    EXPECT_DOUBLE_EQ(job.scenario.cluster.topology.fabric.oversubscription, 2);
    EXPECT_DOUBLE_EQ(job.scenario.cluster.hardware.gpu.hbm_capacity_bytes, 40.0 * (1 << 30));
    ASSERT_EQ(job.scenario.cluster.topology.what_if.size(), 1u);
    const config::Location& where = job.scenario.cluster.topology.what_if[0].where;
    EXPECT_EQ(fmt::format("{}:{}:{}", where.file, where.line, where.column), "c.yaml:5:43");
  }
  dir_.write(
      "tapered.yaml",
      "schema_version: 1\nextends: s.yaml\ncluster: {topology_set: {fabric: {oversubscription: 4}}}\n");
  EXPECT_THAT(errors("  - {scenario: tapered.yaml}\n"),
              ElementsAre("c.yaml:6:16: error: jobs[0].scenario: the scenario sets cluster.topology_set "
                          "(fabric.oversubscription at tapered.yaml:3:53), but a job runs on the cluster "
                          "file's topology; move the setting to the cluster file's topology_set, where it "
                          "holds for every job"));
}

}  // namespace
}  // namespace trainsim::cluster
