// Nodes with slow NICs (a scenario's stragglers.slow_nics): traffic that crosses them runs at their
// bandwidth, on the SimGrid platform and in the ideal tiers alike. One SimGrid engine per test.
#include <gtest/gtest.h>
#include <simgrid/s4u.hpp>

#include "sim/config/loader.h"
#include "sim/cost/alpha_beta.h"
#include "sim/engine/simgrid_transport.h"
#include "tests/config/config_test_util.h"
#include "tests/engine/ideal_transport.h"

namespace trainsim::engine {
namespace {

using trainsim::testing::ScratchDir;

// 16 GPUs on two nodes of the minimal test cluster (8 NICs of 200 Gb/s per node, a 200 Gb/s
// fabric), node 1's NICs at 50 Gb/s.
config::Scenario two_nodes_one_slow(const ScratchDir& dir) {
  trainsim::testing::write_minimal_cluster(dir);
  dir.write(
      "s.yaml",
      "schema_version: 1\nname: s\nmodel: {layers: 2, hidden: 1024, heads: 16, vocab: 128, seq_len: 1024}\n"
      "training: {global_batch: 16}\n"
      "cluster: {topology: topo.yaml, hardware: hw.yaml, gpus: 16}\n"
      "stragglers: {slow_nics: [{nodes: [1], bandwidth: 50Gbps}]}\n");
  return config::load_scenario("s.yaml");
}

// A GPU's share of its node's NICs is one NIC here (8 NICs, 8 GPUs).
TEST(SlowNics, IdealTiersGiveTrafficOfTheSlowNodeItsShare) {
  ScratchDir dir;
  const cost::IdealTiers tiers = cost::ideal_tiers(two_nodes_one_slow(dir));
  EXPECT_DOUBLE_EQ(tiers.connecting({0, 1}).bandwidth_bytes_per_s, 300e9);   // NVSwitch
  EXPECT_DOUBLE_EQ(tiers.connecting({0, 8}).bandwidth_bytes_per_s, 6.25e9);  // node 1's NIC
  EXPECT_DOUBLE_EQ(tiers.connecting({8, 9}).bandwidth_bytes_per_s, 300e9);   // inside node 1
  EXPECT_DOUBLE_EQ(tiers.connecting({0, 3, 15}).bandwidth_bytes_per_s, 6.25e9);
}

// 1 GB into node 1 and 1 GB out of it, one after the other: both at node 1's NIC bandwidth.
TEST(SlowNics, SendIntoASlowNodeRunsAtItsNicBandwidth) {
  ScratchDir dir;
  const config::Scenario s = two_nodes_one_slow(dir);
  SimGridTransport slow(s.cluster.topology, s.cluster.hardware, s.stragglers.nic_bandwidth_by_node());
  slow.build_platform();
  double slow_s = 0, back_s = 0;
  simgrid::s4u::Actor::create("sender", slow.host_of(0), [&] {
    double start = simgrid::s4u::Engine::get_clock();
    slow.send(0, 8, 1e9);
    slow_s = simgrid::s4u::Engine::get_clock() - start;
    start = simgrid::s4u::Engine::get_clock();
    slow.send(9, 1, 1e9);  // out of node 1: its NICs are slow both ways
    back_s = simgrid::s4u::Engine::get_clock() - start;
  });
  simgrid::s4u::Engine::get_instance()->run();
  EXPECT_NEAR(slow_s, 1e9 / 6.25e9, 0.01 * slow_s);
  EXPECT_NEAR(back_s, 1e9 / 6.25e9, 0.01 * back_s);
}

// Without slow NICs the same send is bound by the 25 GB/s NICs and fabric.
TEST(SlowNics, NominalSendRunsAtTheTopologysNicBandwidth) {
  ScratchDir dir;
  const config::Scenario s = two_nodes_one_slow(dir);
  SimGridTransport nominal(s.cluster.topology, s.cluster.hardware);
  nominal.build_platform();
  double nominal_s = 0;
  simgrid::s4u::Actor::create("sender", nominal.host_of(0), [&] {
    const double start = simgrid::s4u::Engine::get_clock();
    nominal.send(0, 8, 1e9);
    nominal_s = simgrid::s4u::Engine::get_clock() - start;
  });
  simgrid::s4u::Engine::get_instance()->run();
  EXPECT_NEAR(nominal_s, 1e9 / 25e9, 0.01 * nominal_s);
}

}  // namespace
}  // namespace trainsim::engine
