#include "calibrate/fit/collective_fits.h"

#include <gtest/gtest.h>

#include "calibrate/collective_kinds.h"

namespace trainsim::calibrate {
namespace {

using config::CollectiveKind;

std::vector<config::CollectiveSample> samples(CollectiveKind kind, int ranks, double latency_s,
                                              double busbw) {
  std::vector<config::CollectiveSample> out;
  for (double bytes = 1024; bytes <= (1 << 30); bytes *= 4) {
    out.push_back({kind,
                   ranks,
                   1,
                   bytes,
                   latency_s + bytes * bus_bandwidth_factor(kind, ranks) / busbw,
                   {},
                   std::nullopt});
  }
  return out;
}

TEST(CollectiveFits, RecoverLatencyAndBusBandwidth) {
  std::vector<config::CollectiveSample> all = samples(CollectiveKind::kAllReduce, 8, 15e-6, 450e9);
  const auto more = samples(CollectiveKind::kAllToAll, 4, 25e-6, 300e9);
  all.insert(all.end(), more.begin(), more.end());
  std::vector<std::string> notes;
  const std::vector<FittedCollective> fits = fit_collectives(all, &notes);
  ASSERT_EQ(fits.size(), 2u);
  EXPECT_TRUE(notes.empty());
  EXPECT_EQ(fits[0].fit.kind, CollectiveKind::kAllReduce);  // ordered by kind
  EXPECT_NEAR(fits[0].fit.latency_s, 15e-6, 15e-8);
  EXPECT_NEAR(fits[0].fit.bus_bandwidth_bytes_per_s, 450e9, 4.5e9);
  EXPECT_EQ(fits[0].fit.min_bytes, 1024);
  EXPECT_EQ(fits[0].fit.max_bytes, 1 << 30);
  EXPECT_NEAR(fits[1].fit.latency_s, 25e-6, 25e-8);
  EXPECT_NEAR(fits[1].fit.bus_bandwidth_bytes_per_s, 300e9, 3e9);
  for (const config::CollectiveSample& s : all) {
    const config::CollectiveFit& f = s.kind == CollectiveKind::kAllReduce ? fits[0].fit : fits[1].fit;
    EXPECT_NEAR(predicted_duration_s(f, s.bytes), s.duration_s, 1e-6 * s.duration_s);
  }
}

TEST(CollectiveFits, RangesTileTheMeasuredSizes) {
  std::vector<config::CollectiveSample> two;
  for (double bytes = 8; bytes <= (1 << 30); bytes *= 2) {
    const bool small = bytes < 65536;
    two.push_back({CollectiveKind::kAllGather,
                   8,
                   1,
                   bytes,
                   (small ? 8e-6 : 30e-6) + bytes * 0.875 / (small ? 20e9 : 350e9),
                   {},
                   std::nullopt});
  }
  const std::vector<FittedCollective> fits = fit_collectives(two, nullptr);
  ASSERT_EQ(fits.size(), 2u);
  EXPECT_EQ(fits[0].fit.min_bytes, 8);
  EXPECT_DOUBLE_EQ(fits[0].fit.max_bytes, fits[1].fit.min_bytes);
  EXPECT_EQ(fits[1].fit.max_bytes, 1 << 30);
  EXPECT_GT(fits[0].fit.max_bytes, 32768);
  EXPECT_LT(fits[0].fit.max_bytes, 65536);
}

TEST(CollectiveFits, NoFitWhereBusBandwidthIsZeroOrDataAreTooFew) {
  std::vector<config::CollectiveSample> all = samples(CollectiveKind::kAllReduce, 1, 5e-6, 1e12);
  all.push_back({CollectiveKind::kBarrier, 8, 1, 0, 20e-6, {}, std::nullopt});
  all.push_back({CollectiveKind::kSendRecv, 2, 1, 8, 5e-6, {}, std::nullopt});
  std::vector<std::string> notes;
  EXPECT_TRUE(fit_collectives(all, &notes).empty());
  EXPECT_EQ(notes.size(), 2u);  // the barrier (size 0) is not even a group
}

TEST(CollectiveKinds, NcclTestsConventions) {
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(CollectiveKind::kAllReduce, 8), 1.75);
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(CollectiveKind::kAllGather, 4), 0.75);
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(CollectiveKind::kSendRecv, 4), 1.0);
  EXPECT_EQ(kind_of_program("./build/all_reduce_perf"), CollectiveKind::kAllReduce);
  EXPECT_EQ(kind_of_program("alltoall"), CollectiveKind::kAllToAll);
  EXPECT_FALSE(kind_of_program("hypercube_perf").has_value());
  EXPECT_EQ(rank_buffers(CollectiveKind::kAllGather, 8, 1024).send_bytes, 128);
  EXPECT_EQ(rank_buffers(CollectiveKind::kReduceScatter, 8, 1024).recv_bytes, 128);
}

}  // namespace
}  // namespace trainsim::calibrate
