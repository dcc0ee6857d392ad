#include "sim/common/isolated.h"

#include <map>
#include <signal.h>
#include <stdexcept>
#include <unistd.h>

#include <gtest/gtest.h>

namespace trainsim {
namespace {

std::map<size_t, IsolatedResult> run_all(size_t count, IsolatedOptions options,
                                         const std::function<nlohmann::json(size_t)>& task) {
  std::map<size_t, IsolatedResult> results;
  run_isolated(count, options, task, [&](size_t i, IsolatedResult r) {
    EXPECT_FALSE(results.count(i)) << "task " << i << " reported twice";
    results[i] = std::move(r);
  });
  return results;
}

TEST(Isolated, ReturnsEveryValueWithAnyNumberOfJobs) {
  for (int jobs : {1, 3, 8}) {
    const auto results = run_all(10, {jobs, 0}, [](size_t i) {
      return nlohmann::json{{"square", i * i}, {"pid", ::getpid()}};
    });
    ASSERT_EQ(results.size(), 10u);
    for (const auto& [i, r] : results) {
      ASSERT_TRUE(r.ok) << r.error;
      EXPECT_EQ(r.value["square"], i * i);
      EXPECT_NE(r.value["pid"], ::getpid()) << "ran in the caller's process";
    }
  }
}

TEST(Isolated, StateChangedByATaskStaysInItsChild) {
  static int counter = 0;
  const auto results = run_all(3, {1, 0}, [](size_t) { return ++counter; });
  for (const auto& [i, r] : results) EXPECT_EQ(r.value, 1);
  EXPECT_EQ(counter, 0);
}

TEST(Isolated, ExceptionsCrashesAndTimeoutsBecomeErrors) {
  const auto results = run_all(4, {4, 2.0}, [](size_t i) -> nlohmann::json {
    if (i == 0) throw std::runtime_error("bad plan: tp does not divide heads");
    if (i == 1) ::raise(SIGABRT);  // a crash that AddressSanitizer, in sanitized builds, leaves alone
    if (i == 2) ::pause();         // hangs until killed
    return "fine";
  });
  EXPECT_EQ(results.at(0).error, "bad plan: tp does not divide heads");
  EXPECT_NE(results.at(1).error.find("signal 6"), std::string::npos) << results.at(1).error;
  EXPECT_NE(results.at(2).error.find("time limit of 2 s"), std::string::npos) << results.at(2).error;
  EXPECT_TRUE(results.at(3).ok);
  for (size_t i = 0; i < 3; ++i) EXPECT_FALSE(results.at(i).ok);
}

TEST(Isolated, LargeResultsArriveWhole) {
  const auto results = run_all(2, {2, 0}, [](size_t) { return std::string(1 << 20, 'x'); });
  for (const auto& [i, r] : results) EXPECT_EQ(r.value.get<std::string>().size(), 1u << 20);
}

TEST(Isolated, StopLeavesTheRestUnrun) {
  size_t done = 0;
  run_isolated(
      100, {2, 0}, [](size_t i) { return i; }, [&](size_t, IsolatedResult) { ++done; },
      [&] { return done >= 5; });
  EXPECT_GE(done, 5u);
  EXPECT_LT(done, 10u);
}

TEST(Isolated, AThrowingCallbackPropagatesAfterReapingChildren) {
  EXPECT_THROW(run_isolated(
                   6, {3, 0}, [](size_t i) { return i; },
                   [](size_t, IsolatedResult) { throw std::runtime_error("disk full"); }),
               std::runtime_error);
}

}  // namespace
}  // namespace trainsim
