// Jobs sharing a cluster: traffic of different jobs shares the links they both cross and nothing
// else, a job that finishes its iterations first keeps running while the others need it, and a
// late start shifts a job. Each simulation runs in a child process (run_cluster).
#include <fstream>
#include <map>

#include <gtest/gtest.h>

#include "sim/cluster/report.h"
#include "sim/cluster/runner.h"
#include "sim/report/link_report.h"
#include "tests/config/config_test_util.h"

namespace trainsim::cluster {
namespace {

using nlohmann::json;
using trainsim::testing::ScratchDir;

// Four one-GPU nodes, two per leaf switch, each leaf's uplink `oversubscription` times thinner than
// its nodes' NICs together; a data-parallel GPT on two GPUs whose gradient all-reduce runs after
// the backward pass (no overlap), `layers` deep.
void write_inputs(const ScratchDir& dir, int oversubscription) {
  trainsim::testing::write_minimal_cluster(dir);  // hw.yaml
  dir.write(
      "tree.yaml",
      "schema_version: 1\nname: tree\nnode:\n  gpus: 1\n  intra: {kind: nvswitch, bandwidth: 300GB/s, "
      "latency: 1us}\n  pcie: {bandwidth: 32GB/s, latency: 1us}\n  nics: {count: 1, bandwidth: 100Gbps, "
      "latency: 1us}\n  host_memory: 1TiB\nfabric: {kind: fat-tree, nodes: 4, levels: 2, "
      "oversubscription: " +
          std::to_string(oversubscription) + ", link: {bandwidth: 100Gbps, latency: 0.1us}}\n");
  for (const int layers : {4, 16}) {
    dir.write("dp" + std::to_string(layers) + ".yaml",
              "schema_version: 1\nname: dp\nmodel: {layers: " + std::to_string(layers) +
                  ", hidden: 2048, heads: 16, vocab: 32000, seq_len: 2048}\ntraining: {global_batch: 4}\n"
                  "parallelism: {overlap_grad_reduce: false}\ncluster: {topology: tree.yaml, hardware: "
                  "hw.yaml, gpus: 2}\n");
  }
}

// Runs `jobs` (YAML lines of the jobs list) of the cluster in the working directory, with every rank
// simulated on `network`, the trace written to `trace` when given, the `links` busiest link directions
// reported when > 0.
ClusterReport run(const std::string& jobs, const std::string& network = "simgrid",
                  const std::string& trace = "", size_t links = 0) {
  std::ofstream("c.yaml") << "schema_version: 1\ntopology: tree.yaml\nhardware: hw.yaml\njobs:\n" << jobs;
  const ClusterFile file = load_cluster("c.yaml");
  ClusterRunOptions options;
  options.run.engine.full = true;
  options.run.engine.iterations = 2;
  options.run.network = network == "ideal" ? engine::NetworkModel::kIdeal : engine::NetworkModel::kSimgrid;
  options.parallel = 2;
  options.trace_path = trace;
  options.run.busiest_links = links;
  return make_cluster_report(file, run_cluster(file, options), {"test", network, true, 2});
}

// The two jobs' all-reduce rings both cross each leaf's uplink, which carries one NIC's bandwidth:
// together they get half of it each, so the (bandwidth-bound) all-reduce takes twice as long and
// nothing else changes. Its latency, NCCL's protocol steps through the network (about 1.3 % of it
// here), is not shared and does not double: hence 2 % rather than exact.
TEST(ClusterRun, JobsSharingAThinUplinkHalveEachOthersAllReduce) {
  ScratchDir dir;
  write_inputs(dir, 2);
  const ClusterReport r =
      run("  - {scenario: dp4.yaml, name: a, nodes: [0, 2]}\n  - {scenario: dp4.yaml, name: b, "
          "nodes: [1, 3]}\n");
  for (const JobOutcome& job : r.jobs) {
    SCOPED_TRACE(job.name);
    const double alone = job.alone.iteration_time_s;
    const double comm = job.alone.breakdown.exposed_comm_s;
    ASSERT_GT(comm, 0.2 * alone);
    EXPECT_NEAR(job.shared.breakdown.exposed_comm_s, 2 * comm, 0.02 * comm);
    EXPECT_NEAR(job.shared.iteration_time_s - alone, comm, 0.02 * comm);
    EXPECT_NEAR(job.shared.breakdown.compute_s, job.alone.breakdown.compute_s, 1e-12);
    ASSERT_FALSE(job.slowed.empty());
    const SlowedCollective& slowed = job.slowed[0];
    EXPECT_EQ(slowed.shared.kind, "all_reduce");
    EXPECT_NEAR(slowed.shared.busbw_bytes_per_s, slowed.alone.busbw_bytes_per_s / 2,
                0.01 * slowed.alone.busbw_bytes_per_s);
  }
  // The JSON form states the same.
  const json j = to_json(r).at("jobs")[0];
  EXPECT_DOUBLE_EQ(j.at("slowdown").get<double>(), r.jobs[0].slowdown());
  EXPECT_EQ(j.at("slowed_collectives")[0].at("kind"), "all_reduce");
  EXPECT_DOUBLE_EQ(j.at("shared").at("breakdown").at("exposed_comm_s").get<double>(),
                   r.jobs[0].shared.breakdown.exposed_comm_s);
}

// The link load says why: each leaf's uplink carries both jobs' all-reduce, half each, at its full
// bandwidth whenever it carries anything, while each NIC carries one job at half of its bandwidth.
TEST(ClusterRun, TheLinkLoadNamesTheSharedUplinkAsTheBottleneck) {
  ScratchDir dir;
  write_inputs(dir, 2);
  const ClusterReport r = run(
      "  - {scenario: dp4.yaml, name: a, nodes: [0, 2]}\n  - {scenario: dp4.yaml, name: b, nodes: [1, 3]}\n",
      "simgrid", "", 100);
  ASSERT_TRUE(r.links);
  EXPECT_FALSE(r.jobs[0].shared_report.contains("links"));  // once, for the cluster
  const std::vector<cost::LinkDirectionLoad>& busiest = r.links->busiest;
  ASSERT_FALSE(busiest.empty());
  EXPECT_EQ(busiest[0].tier.rfind("fabric: ", 0), 0u) << busiest[0].name;
  bool saw_nic = false;
  for (const cost::LinkDirectionLoad& l : busiest) {
    const std::vector<double>& by_job = l.bytes_by_group;
    SCOPED_TRACE(l.name);
    if (l.tier == "fabric: l1 -> l2" || l.tier == "fabric: l2 -> l1") {
      EXPECT_NEAR(l.utilization_when_busy, 1, 0.02);
      EXPECT_NEAR(by_job.at(0), by_job.at(1), 1e-6 * by_job.at(0));
    } else if (l.tier == "nic: nic -> l1") {
      saw_nic = true;
      EXPECT_NEAR(l.utilization_when_busy, 0.5, 0.03);
      EXPECT_TRUE(by_job.at(0) == 0 || by_job.at(1) == 0);  // a node's NIC carries its own job
    }
  }
  // The cluster's JSON states it, and reads back as the same summary.
  const json links = to_json(r).at("links");
  EXPECT_EQ(report::to_json(report::link_load_from_json(links)), links);
  EXPECT_TRUE(saw_nic);
}

// Jobs on leaves of their own share no link; with uplinks as wide as their nodes' NICs (a
// non-blocking tree) interleaved jobs share links without slowing each other either.
TEST(ClusterRun, JobsThatShareNoBottleneckDoNotSlowEachOther) {
  for (const int oversubscription : {2, 1}) {
    ScratchDir dir;
    write_inputs(dir, oversubscription);
    const std::string nodes = oversubscription == 2 ? "[0, 1]" : "[0, 2]";
    const std::string others = oversubscription == 2 ? "[2, 3]" : "[1, 3]";
    const ClusterReport r = run("  - {scenario: dp4.yaml, name: a, nodes: " + nodes +
                                "}\n  - {scenario: dp4.yaml, name: b, nodes: " + others + "}\n");
    for (const JobOutcome& job : r.jobs) {
      EXPECT_NEAR(job.slowdown(), 1.0, 1e-9) << "oversubscription " << oversubscription;
    }
  }
}

// A job of 4 layers next to one of 16: the short one keeps iterating until the long one has run its
// two, and every one of its iterations after the first that ended by then counts.
TEST(ClusterRun, AJobDoneFirstKeepsRunningWhileAnotherNeedsIt) {
  ScratchDir dir;
  write_inputs(dir, 2);
  const ClusterReport r =
      run("  - {scenario: dp4.yaml, name: short, nodes: [0, 2]}\n  - {scenario: dp16.yaml, name: long, "
          "nodes: [1, 3]}\n");
  const JobOutcome& short_job = r.jobs[0];
  const JobOutcome& long_job = r.jobs[1];
  EXPECT_GE(short_job.shared_iterations, 3u);
  EXPECT_EQ(long_job.shared_iterations, 1u);
  EXPECT_GT(r.window_s, 2 * long_job.alone.iteration_time_s);
  EXPECT_GT(short_job.slowdown(), 1.0);
  EXPECT_GT(long_job.slowdown(), 1.0);
  // Its shared time is the mean of those iterations, between their shortest and longest.
  EXPECT_LE(short_job.min_iteration_s, short_job.shared.iteration_time_s);
  EXPECT_GE(short_job.max_iteration_s, short_job.shared.iteration_time_s);
}

// On the contention-free network a job that starts late is the same job, shifted: its iterations
// take what they take alone, and the jobs started before it wait for it to run its two.
TEST(ClusterRun, ALateStartShiftsTheJob) {
  ScratchDir dir;
  write_inputs(dir, 2);
  const ClusterReport r =
      run("  - {scenario: dp4.yaml, name: early, nodes: [0, 2]}\n  - {scenario: dp4.yaml, name: late, "
          "nodes: [1, 3], start: 1s}\n",
          "ideal");
  const JobOutcome& early = r.jobs[0];
  const JobOutcome& late = r.jobs[1];
  const double t = late.alone.iteration_time_s;
  EXPECT_NEAR(r.window_s, 1.0 + 2 * t, 1e-9);
  EXPECT_NEAR(late.slowdown(), 1.0, 1e-9);
  EXPECT_NEAR(early.slowdown(), 1.0, 1e-9);
  // Of the early job's iterations, only those inside the late one's two count: one or two.
  EXPECT_GE(early.shared_iterations, 1u);
  EXPECT_LE(early.shared_iterations, 2u);
  EXPECT_FALSE(r.warnings.empty());  // the ideal network cannot make jobs interfere
}

// The trace of the jobs together has a process per node, named with the job that holds it.
TEST(ClusterRun, TheTraceNamesEachNodesJob) {
  ScratchDir dir;
  write_inputs(dir, 2);
  run("  - {scenario: dp4.yaml, name: a, nodes: [0, 2]}\n  - {scenario: dp4.yaml, name: b, nodes: [3, 1]}\n",
      "ideal", "trace.json");
  std::map<int64_t, std::string> process;
  size_t kernels = 0;
  std::ifstream in("trace.json");
  const json trace = json::parse(in);
  ASSERT_TRUE(trace.contains("traceEvents"));
  for (const json& event : trace.at("traceEvents")) {
    if (event.at("name") == "process_name") process[event.at("pid")] = event.at("args").at("name");
    kernels += event.at("ph") == "X" ? 1 : 0;
  }
  EXPECT_EQ(process, (std::map<int64_t, std::string>{{0, "node0 (1 GPUs, job a)"},
                                                     {1, "node1 (1 GPUs, job b)"},
                                                     {2, "node2 (1 GPUs, job a)"},
                                                     {3, "node3 (1 GPUs, job b)"}}));
  EXPECT_GT(kernels, 100u);
}

}  // namespace
}  // namespace trainsim::cluster
