#include "calibrate/fit/alpha_beta.h"

#include <cmath>
#include <stdexcept>

#include <gtest/gtest.h>

namespace trainsim::calibrate {
namespace {

struct Regime {
  double from_bytes;
  double alpha_s;
  double beta_s_per_byte;
};

// Sizes 8 B .. 1 GiB by factor 2 following `regimes`, each time perturbed by a deterministic
// +-`noise` (relative).
std::vector<Point> synthetic(const std::vector<Regime>& regimes, double noise) {
  std::vector<Point> points;
  int i = 0;
  for (double bytes = 8; bytes <= (1 << 30); bytes *= 2, ++i) {
    const Regime* r = &regimes.front();
    for (const Regime& candidate : regimes) {
      if (bytes >= candidate.from_bytes) r = &candidate;
    }
    const double wobble = noise * std::sin(1.7 * i + 0.3);
    points.push_back({bytes, (r->alpha_s + r->beta_s_per_byte * bytes) * (1 + wobble)});
  }
  return points;
}

TEST(AlphaBetaFit, LineRecoversExactAlphaAndBeta) {
  const std::vector<Point> points = synthetic({{0, 5e-6, 1.0 / 100e9}}, 0);
  const LineFit fit = fit_line(points);
  EXPECT_NEAR(fit.alpha_s, 5e-6, 5e-6 * 1e-9);
  EXPECT_NEAR(fit.beta_s_per_byte, 1e-11, 1e-11 * 1e-9);
  EXPECT_LT(fit.quality.max_relative_error, 1e-9);
  EXPECT_EQ(fit.quality.points, points.size());
}

TEST(AlphaBetaFit, NegativeInterceptIsClampedToZero) {
  // Pure bandwidth with a small sag at small sizes would fit a negative latency unconstrained.
  const std::vector<Point> points = {{1e6, 0.9e-5}, {2e6, 2e-5}, {4e6, 4e-5}, {8e6, 8e-5}};
  const LineFit fit = fit_line(points);
  EXPECT_GE(fit.alpha_s, 0.0);
  EXPECT_GT(fit.beta_s_per_byte, 0.0);
}

TEST(AlphaBetaFit, RefusesTooFewOrNonPositivePoints) {
  const std::vector<Point> one = {{8, 1e-6}};
  const std::vector<Point> zero = {{8, 1e-6}, {16, 0}};
  EXPECT_THROW(fit_line(one), std::invalid_argument);
  EXPECT_THROW(fit_line(zero), std::invalid_argument);
}

// The test the issue asks for: fitting recovers known alpha/beta from synthetic samples within 1 %.
TEST(AlphaBetaFit, PiecewiseRecoversThreeProtocolsWithinOnePercent) {
  const std::vector<Regime> regimes = {
      {0, 12e-6, 1.75 / 40e9}, {64 * 1024, 20e-6, 1.75 / 250e9}, {4 << 20, 45e-6, 1.75 / 460e9}};
  const std::vector<Segment> segments = fit_piecewise(synthetic(regimes, 0.0005), 3, 3);
  ASSERT_EQ(segments.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    SCOPED_TRACE(i);
    EXPECT_NEAR(segments[i].fit.alpha_s, regimes[i].alpha_s, 0.01 * regimes[i].alpha_s);
    EXPECT_NEAR(segments[i].fit.beta_s_per_byte, regimes[i].beta_s_per_byte,
                0.01 * regimes[i].beta_s_per_byte);
    EXPECT_LT(segments[i].fit.quality.max_relative_error, 0.005);
  }
  EXPECT_EQ(segments[0].begin, 0u);
  EXPECT_EQ(segments[2].end, synthetic(regimes, 0).size());
}

TEST(AlphaBetaFit, OneRegimeIsNotSplit) {
  const std::vector<Segment> segments = fit_piecewise(synthetic({{0, 8e-6, 1.0 / 200e9}}, 0.001), 3, 3);
  ASSERT_EQ(segments.size(), 1u);
  EXPECT_NEAR(segments[0].fit.alpha_s, 8e-6, 0.01 * 8e-6);
  EXPECT_NEAR(segments[0].fit.beta_s_per_byte, 1 / 200e9, 0.01 / 200e9);
}

TEST(AlphaBetaFit, TimesThatDoNotGrowGiveNoFit) {
  std::vector<Point> flat;
  for (double b = 8; b < 1e6; b *= 2) flat.push_back({b, 5e-6});
  EXPECT_TRUE(fit_piecewise(flat).empty());
}

TEST(AlphaBetaFit, LongSweepsStayFast) {
  std::vector<Point> points;  // nccl-tests with a fixed step: 2000 rows
  for (int i = 1; i <= 2000; ++i) points.push_back({i * 1e6, 10e-6 + i * 1e6 / 300e9});
  const std::vector<Segment> segments = fit_piecewise(points);
  ASSERT_FALSE(segments.empty());
  EXPECT_NEAR(segments.front().fit.beta_s_per_byte, 1 / 300e9, 0.01 / 300e9);
}

}  // namespace
}  // namespace trainsim::calibrate
