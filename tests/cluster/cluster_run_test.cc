// Jobs sharing a cluster: traffic of different jobs shares the links they both cross and nothing
// else, a job that finishes its iterations first keeps running while the others need it, and a
// late start shifts a job. Each simulation runs in a child process (run_cluster).
#include <fstream>
#include <map>

#include <gtest/gtest.h>

#include "sim/cluster/report.h"
#include "sim/cluster/runner.h"
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
json run(const std::string& jobs, const std::string& network = "simgrid", const std::string& trace = "",
         size_t links = 0) {
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

double exposed_comm(const json& job, const char* run) {
  return job.at(run).at("breakdown").at("exposed_comm_s").get<double>();
}

// The two jobs' all-reduce rings both cross each leaf's uplink, which carries one NIC's bandwidth:
// together they get half of it each, so the (bandwidth-bound) all-reduce takes twice as long and
// nothing else changes. Its latency, NCCL's protocol steps through the network (about 1.3 % of it
// here), is not shared and does not double: hence 2 % rather than exact.
TEST(ClusterRun, JobsSharingAThinUplinkHalveEachOthersAllReduce) {
  ScratchDir dir;
  write_inputs(dir, 2);
  const json r =
      run("  - {scenario: dp4.yaml, name: a, nodes: [0, 2]}\n  - {scenario: dp4.yaml, name: b, "
          "nodes: [1, 3]}\n");
  for (const json& job : r.at("jobs")) {
    SCOPED_TRACE(job.at("name").get<std::string>());
    const double alone = job.at("alone").at("iteration_time_s").get<double>();
    const double shared = job.at("shared").at("iteration_time_s").get<double>();
    const double comm = exposed_comm(job, "alone");
    ASSERT_GT(comm, 0.2 * alone);
    EXPECT_NEAR(exposed_comm(job, "shared"), 2 * comm, 0.02 * comm);
    EXPECT_NEAR(shared - alone, comm, 0.02 * comm);
    EXPECT_NEAR(job.at("shared").at("breakdown").at("compute_s").get<double>(),
                job.at("alone").at("breakdown").at("compute_s").get<double>(), 1e-12);
    const json& slowed = job.at("slowed_collectives");
    ASSERT_FALSE(slowed.empty());
    EXPECT_EQ(slowed[0].at("kind"), "all_reduce");
    EXPECT_NEAR(slowed[0].at("shared_busbw_bytes_per_s").get<double>(),
                slowed[0].at("alone_busbw_bytes_per_s").get<double>() / 2,
                0.01 * slowed[0].at("alone_busbw_bytes_per_s").get<double>());
  }
}

// The link load says why: each leaf's uplink carries both jobs' all-reduce, half each, at its full
// bandwidth whenever it carries anything, while each NIC carries one job at half of its bandwidth.
TEST(ClusterRun, TheLinkLoadNamesTheSharedUplinkAsTheBottleneck) {
  ScratchDir dir;
  write_inputs(dir, 2);
  const json r = run(
      "  - {scenario: dp4.yaml, name: a, nodes: [0, 2]}\n  - {scenario: dp4.yaml, name: b, nodes: [1, 3]}\n",
      "simgrid", "", 100);
  ASSERT_TRUE(r.contains("links"));
  EXPECT_FALSE(r.at("jobs")[0].at("shared_report").contains("links"));  // once, for the cluster
  const json& busiest = r.at("links").at("busiest");
  ASSERT_FALSE(busiest.empty());
  EXPECT_EQ(busiest[0].at("tier").get<std::string>().rfind("fabric: ", 0), 0u) << busiest[0];
  bool saw_nic = false;
  for (const json& l : busiest) {
    const std::string tier = l.at("tier").get<std::string>();
    const std::vector<double> by_job = l.at("bytes_by_group").get<std::vector<double>>();
    SCOPED_TRACE(l.at("link").get<std::string>());
    if (tier == "fabric: l1 -> l2" || tier == "fabric: l2 -> l1") {
      EXPECT_NEAR(l.at("utilization_when_busy").get<double>(), 1, 0.02);
      EXPECT_NEAR(by_job.at(0), by_job.at(1), 1e-6 * by_job.at(0));
    } else if (tier == "nic: nic -> l1") {
      saw_nic = true;
      EXPECT_NEAR(l.at("utilization_when_busy").get<double>(), 0.5, 0.03);
      EXPECT_TRUE(by_job.at(0) == 0 || by_job.at(1) == 0);  // a node's NIC carries its own job
    }
  }
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
    const json r = run("  - {scenario: dp4.yaml, name: a, nodes: " + nodes +
                       "}\n  - {scenario: dp4.yaml, "
                       "name: b, nodes: " +
                       others + "}\n");
    for (const json& job : r.at("jobs")) {
      EXPECT_NEAR(job.at("slowdown").get<double>(), 1.0, 1e-9) << "oversubscription " << oversubscription;
    }
  }
}

// A job of 4 layers next to one of 16: the short one keeps iterating until the long one has run its
// two, and every one of its iterations after the first that ended by then counts.
TEST(ClusterRun, AJobDoneFirstKeepsRunningWhileAnotherNeedsIt) {
  ScratchDir dir;
  write_inputs(dir, 2);
  const json r =
      run("  - {scenario: dp4.yaml, name: short, nodes: [0, 2]}\n  - {scenario: dp16.yaml, name: long, "
          "nodes: [1, 3]}\n");
  const json& short_job = r.at("jobs")[0];
  const json& long_job = r.at("jobs")[1];
  const double window = r.at("window_s").get<double>();
  EXPECT_GE(short_job.at("shared").at("iterations").get<int>(), 3);
  EXPECT_EQ(long_job.at("shared").at("iterations").get<int>(), 1);
  EXPECT_GT(window, 2 * long_job.at("alone").at("iteration_time_s").get<double>());
  EXPECT_GT(short_job.at("slowdown").get<double>(), 1.0);
  EXPECT_GT(long_job.at("slowdown").get<double>(), 1.0);
  // Its shared time is the mean of those iterations, between their shortest and longest.
  const json& s = short_job.at("shared");
  EXPECT_LE(s.at("min_iteration_s").get<double>(), s.at("iteration_time_s").get<double>());
  EXPECT_GE(s.at("max_iteration_s").get<double>(), s.at("iteration_time_s").get<double>());
}

// On the contention-free network a job that starts late is the same job, shifted: its iterations
// take what they take alone, and the jobs started before it wait for it to run its two.
TEST(ClusterRun, ALateStartShiftsTheJob) {
  ScratchDir dir;
  write_inputs(dir, 2);
  const json r =
      run("  - {scenario: dp4.yaml, name: early, nodes: [0, 2]}\n  - {scenario: dp4.yaml, name: late, "
          "nodes: [1, 3], start: 1s}\n",
          "ideal");
  const json& early = r.at("jobs")[0];
  const json& late = r.at("jobs")[1];
  const double t = late.at("alone").at("iteration_time_s").get<double>();
  EXPECT_NEAR(r.at("window_s").get<double>(), 1.0 + 2 * t, 1e-9);
  EXPECT_NEAR(late.at("slowdown").get<double>(), 1.0, 1e-9);
  EXPECT_NEAR(early.at("slowdown").get<double>(), 1.0, 1e-9);
  // Of the early job's iterations, only those inside the late one's two count: one or two.
  EXPECT_GE(early.at("shared").at("iterations").get<int>(), 1);
  EXPECT_LE(early.at("shared").at("iterations").get<int>(), 2);
  EXPECT_FALSE(r.at("warnings").empty());  // the ideal network cannot make jobs interfere
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
