// Power and energy: a GPU's states from its timeline, the profile's and scenario's power keys with
// their located errors, and the campaign's energy.
#include "sim/report/power.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "sim/analytic/campaign.h"
#include "sim/config/loader.h"
#include "sim/report/campaign.h"
#include "tests/config/config_test_util.h"

namespace trainsim::report {
namespace {

using ::testing::ElementsAre;
using trainsim::testing::errors_of;
using trainsim::testing::ScratchDir;
using workload::OpKind;
using workload::Stream;

// A GPU's ops with the times the engine would record for them.
class Timeline {
 public:
  void add(OpKind kind, Stream stream, double launch_s, double end_s) {
    workload::Op op;
    op.kind = kind;
    op.stream = stream;
    graph_.add(op, {});
    run_.start_s.push_back(launch_s);
    run_.launch_s.push_back(launch_s);
    run_.end_s.push_back(end_s);
  }
  std::vector<PowerSpan> states(double start_s, double end_s) const {
    return gpu_states(graph_, run_, start_s, end_s);
  }

 private:
  workload::Graph graph_;
  engine::RankRun run_;
};

MATCHER_P3(Span, start_s, end_s, state, "") {
  return arg.start_s == start_s && arg.end_s == end_s && arg.state == state;
}

TEST(GpuStates, AKernelWinsOverCommunicationAndNothingIsIdle) {
  Timeline t;
  t.add(OpKind::kGemm, Stream::kCompute, 0, 1);
  t.add(OpKind::kCollective, Stream::kDpComm, 0.5, 2);  // overlapped by the GEMM until 1
  t.add(OpKind::kMemory, Stream::kCompute, 2, 2.5);
  t.add(OpKind::kCopy, Stream::kCopy, 3, 3.5);
  t.add(OpKind::kHostSync, Stream::kCompute, 3.6, 3.8);  // the GPU waits for the host: idle
  t.add(OpKind::kAlloc, Stream::kCompute, 3.8, 3.9);
  EXPECT_THAT(t.states(0, 4),
              ElementsAre(Span(0.0, 1.0, GpuState::kCompute), Span(1.0, 2.0, GpuState::kCommunication),
                          Span(2.0, 2.5, GpuState::kMemory), Span(2.5, 3.0, GpuState::kIdle),
                          Span(3.0, 3.5, GpuState::kCommunication), Span(3.5, 4.0, GpuState::kIdle)));
  // A window cuts the spans at its edges.
  EXPECT_THAT(t.states(0.5, 3.2),
              ElementsAre(Span(0.5, 1.0, GpuState::kCompute), Span(1.0, 2.0, GpuState::kCommunication),
                          Span(2.0, 2.5, GpuState::kMemory), Span(2.5, 3.0, GpuState::kIdle),
                          Span(3.0, 3.2, GpuState::kCommunication)));
}

TEST(GpuStates, BackToBackKernelsAreOneSpan) {
  Timeline t;
  t.add(OpKind::kAttentionForward, Stream::kCompute, 0, 1);
  t.add(OpKind::kGemm, Stream::kCompute2, 1, 2);  // the other lane of an overlapped pair
  t.add(OpKind::kSend, Stream::kP2p, 1.5, 3);
  EXPECT_THAT(t.states(0, 3),
              ElementsAre(Span(0.0, 2.0, GpuState::kCompute), Span(2.0, 3.0, GpuState::kCommunication)));
  EXPECT_THAT(Timeline().states(0, 1), ElementsAre(Span(0.0, 1.0, GpuState::kIdle)));
}

// The minimal cluster with a power section in its profile and the scenario's cluster lines.
class PowerInputs : public ::testing::Test {
 protected:
  PowerInputs() { trainsim::testing::write_minimal_cluster(dir_); }
  std::vector<std::string> errors(const std::string& profile_power, const std::string& cluster_lines = "") {
    write(profile_power, cluster_lines);
    return errors_of([] { config::load_scenario("s.yaml"); });
  }
  config::Scenario load(const std::string& profile_power, const std::string& cluster_lines = "") {
    write(profile_power, cluster_lines);
    return config::load_scenario("s.yaml");
  }
  ScratchDir dir_;

 private:
  void write(const std::string& profile_power, const std::string& cluster_lines) {
    dir_.write("hwp.yaml", "schema_version: 1\nextends: hw.yaml\nname: gpu-with-power\npower: " +
                               profile_power + "\nsources: {power: test measurement}\n");
    dir_.write("s.yaml",
               "schema_version: 1\nname: s\nmodel: {preset: gpt3-125m}\ntraining: {global_batch: 8}\n"
               "parallelism: {dp: 8}\ncluster:\n  topology: topo.yaml\n  hardware: hwp.yaml\n  gpus: 8\n" +
                   cluster_lines);
  }
};

constexpr const char* kPower = "{limit: 700W, idle: 90W, compute: 690W, memory: 450W, communication: 250W}";

TEST_F(PowerInputs, LoadWithTheirUnits) {
  const config::Scenario s = load(kPower,
                                  "  facility: {pue: 1.2, electricity_price: 0.08USD/kWh}\n  topology_set: "
                                  "{node: {other_power: 2.9kW}}\n");
  ASSERT_TRUE(s.cluster.hardware.power.has_value());
  EXPECT_DOUBLE_EQ(s.cluster.hardware.power->compute_w, 690);
  EXPECT_DOUBLE_EQ(state_power_w(*s.cluster.hardware.power, GpuState::kCommunication), 250);
  EXPECT_DOUBLE_EQ(s.cluster.topology.node.other_power_w, 2900);
  EXPECT_DOUBLE_EQ(s.cluster.facility.pue, 1.2);
  EXPECT_DOUBLE_EQ(*s.cluster.facility.electricity_usd_per_kwh, 0.08);
}

TEST_F(PowerInputs, MistakesAreLocated) {
  EXPECT_THAT(
      errors("{limit: 700W, idle: 90W, compute: 800W, memory: 450}"),
      ElementsAre("hwp.yaml:4:8: error: power.communication: missing required key",
                  "hwp.yaml:4:42: error: power.compute: 800W must lie between idle (90W) and limit "
                  "(700W): a busy GPU draws at least what an idle one does, and the board caps it at "
                  "its limit",
                  "hwp.yaml:4:56: error: power.memory: expected a power with a unit, e.g. 700W; \"450\" "
                  "has no unit"));
  EXPECT_THAT(
      errors(kPower, "  facility: {pue: 0.9, electricity_price: 0.08USD}\n"),
      ElementsAre("s.yaml:10:19: error: cluster.facility.pue: must be at least 1, got 0.9",
                  "s.yaml:10:43: error: cluster.facility.electricity_price: expected a positive price in "
                  "US dollars, e.g. 0.08USD/kWh; got \"0.08USD\""));
}

// Without interruptions, training stops only for checkpoints: the run's energy is the iterations at
// the training power and the pauses at the stopped power.
TEST_F(PowerInputs, TheCampaignPaysItsPausesAtTheStoppedPower) {
  const config::Scenario s =
      load(kPower,
           "  facility: {pue: 1.5, electricity_price: 0.1USD/kWh}\ncampaign: {tokens: 1B, checkpoints: "
           "{write_bandwidth: 1GB/s, interval: 1h}}\n");
  PowerReport power;
  power.it_mean_w = 1000;
  power.it_idle_w = 100;
  const analytic::CampaignEstimate estimate = analytic::estimate_campaign(s, 2.0, 0);
  const nlohmann::json c = to_json(campaign_report(s, estimate, &power));
  const double training_s = c.at("training_s").get<double>();
  const double paused_s = c.at("wall_time_s").get<double>() - training_s;
  ASSERT_GT(paused_s, 0);
  EXPECT_NEAR(c.at("energy_j").get<double>(), 1000 * training_s + 100 * paused_s, 1e-6 * training_s);
  EXPECT_NEAR(c.at("facility_energy_j").get<double>(), 1.5 * c.at("energy_j").get<double>(), 1e-6);
  EXPECT_NEAR(c.at("electricity_cost_usd").get<double>(),
              c.at("facility_energy_j").get<double>() / 3.6e6 * 0.1, 1e-9);
  EXPECT_FALSE(campaign_report(s, estimate).energy.has_value());  // no power report, no energy
}

}  // namespace
}  // namespace trainsim::report
