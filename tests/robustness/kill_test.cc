// Killing trainsim while it works never leaves a partial or corrupt file at the destination:
// SIGKILL (no cleanup possible) leaves the destination absent; SIGINT and SIGTERM also remove the
// temporary file, exit 130 / 143 and say how to rerun. Covers `run --trace` (killed mid-run and
// mid-write of the trace) and `calibrate run --quick` on the CPU backend (killed mid-measurement).
#include <chrono>
#include <cstdlib>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <functional>
#include <signal.h>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

#include <gtest/gtest.h>

namespace trainsim {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

class KillTest : public testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "trainsim-kill-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  // Starts trainsim with `args` in the source tree; stdout is discarded, stderr kept for stderr().
  void start(const std::vector<std::string>& args) {
    pid_ = ::fork();
    ASSERT_GE(pid_, 0);
    if (pid_ == 0) {
      const int out = ::open("/dev/null", O_WRONLY);
      const int err = ::open((dir_ / "stderr.txt").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      ::dup2(out, STDOUT_FILENO);
      ::dup2(err, STDERR_FILENO);
      if (::chdir(TRAINSIM_SOURCE_DIR) != 0) ::_exit(127);
      std::vector<char*> argv{const_cast<char*>(TRAINSIM_EXE)};
      for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
      argv.push_back(nullptr);
      ::execv(TRAINSIM_EXE, argv.data());
      ::_exit(127);
    }
  }

  // Polls every millisecond until `ready` holds; fails when trainsim exits first or after 60 s.
  void wait_until(const std::function<bool()>& ready, const std::string& what) {
    const auto deadline = Clock::now() + std::chrono::seconds(60);
    while (!ready()) {
      int status = 0;
      ASSERT_EQ(::waitpid(pid_, &status, WNOHANG), 0) << "trainsim ended before " << what << ":\n"
                                                      << stderr_text();
      ASSERT_LT(Clock::now(), deadline) << "timed out waiting for " << what;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }

  // Sends `signal` and returns the wait status.
  int kill_and_reap(int signal) {
    EXPECT_EQ(::kill(pid_, signal), 0);
    int status = 0;
    EXPECT_EQ(::waitpid(pid_, &status, 0), pid_);
    pid_ = -1;
    return status;
  }

  // The files of the test directory other than the captured stderr.
  std::vector<std::string> files() const {
    std::vector<std::string> names;
    for (const fs::directory_entry& e : fs::directory_iterator(dir_)) {
      if (e.path().filename() != "stderr.txt") names.push_back(e.path().filename().string());
    }
    return names;
  }

  // The size of the temporary file beside `destination` (".NAME.xxxxxx"), -1 while there is none.
  std::intmax_t temporary_size(const fs::path& destination) const {
    const std::string prefix = "." + destination.filename().string() + ".";
    for (const fs::directory_entry& e : fs::directory_iterator(dir_)) {
      if (e.path().filename().string().rfind(prefix, 0) == 0) {
        std::error_code ec;
        const auto size = fs::file_size(e.path(), ec);
        return ec ? -1 : static_cast<std::intmax_t>(size);
      }
    }
    return -1;
  }

  std::string stderr_text() const {
    std::ifstream in(dir_ / "stderr.txt");
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }

  std::vector<std::string> run_trace_args(const fs::path& trace) const {
    return {"run", "scenarios/03-gpt3-175b-64xa100.yaml", "--network", "ideal", "--trace", trace.string(),
            "-q"};
  }

  fs::path dir_;
  pid_t pid_ = -1;
};

TEST_F(KillTest, SigkillWhileTheTraceIsWrittenLeavesNoTraceAtTheDestination) {
  const fs::path trace = dir_ / "trace.json";
  start(run_trace_args(trace));
  wait_until([&] { return temporary_size(trace) > 0; }, "the trace being written");
  const int status = kill_and_reap(SIGKILL);
  ASSERT_TRUE(WIFSIGNALED(status));
  EXPECT_FALSE(fs::exists(trace)) << "a partial trace reached the destination";
}

TEST_F(KillTest, SigintWhileTheTraceIsWrittenCleansUpAndSaysHowToRerun) {
  const fs::path trace = dir_ / "trace.json";
  start(run_trace_args(trace));
  wait_until([&] { return temporary_size(trace) > 0; }, "the trace being written");
  const int status = kill_and_reap(SIGINT);
  ASSERT_TRUE(WIFEXITED(status)) << "killed by signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 130);
  EXPECT_TRUE(files().empty()) << "left behind: " << testing::PrintToString(files());
  EXPECT_NE(stderr_text().find("trainsim run: interrupted (SIGINT); the trace " + trace.string() +
                               " was not written; rerun: trainsim run scenarios/03-gpt3-175b-64xa100.yaml"),
            std::string::npos)
      << stderr_text();
}

TEST_F(KillTest, SigtermDuringTheSimulationCleansUp) {
  const fs::path trace = dir_ / "trace.json";
  start(run_trace_args(trace));
  wait_until([&] { return temporary_size(trace) == 0; }, "the simulation to start");
  const int status = kill_and_reap(SIGTERM);
  ASSERT_TRUE(WIFEXITED(status)) << "killed by signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 143);
  EXPECT_TRUE(files().empty()) << "left behind: " << testing::PrintToString(files());
  EXPECT_NE(stderr_text().find("trainsim run: terminated (SIGTERM)"), std::string::npos) << stderr_text();
}

std::vector<std::string> calibrate_args(const fs::path& profile) {
  return {"calibrate", "run", "--quick",       "--backend", "cpu",
          "--gpus",    "2",   "--no-progress", "--out",     profile.string()};
}

TEST_F(KillTest, SigkillDuringACalibrationLeavesNoProfile) {
  const fs::path profile = dir_ / "cpu.yaml";
  start(calibrate_args(profile));
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  const int status = kill_and_reap(SIGKILL);
  ASSERT_TRUE(WIFSIGNALED(status)) << "the calibration ended before the kill:\n" << stderr_text();
  EXPECT_FALSE(fs::exists(profile)) << "a partial profile reached the destination";
}

TEST_F(KillTest, SigintDuringACalibrationLeavesNoProfileAndSaysHowToRerun) {
  const fs::path profile = dir_ / "cpu.yaml";
  start(calibrate_args(profile));
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  const int status = kill_and_reap(SIGINT);
  ASSERT_TRUE(WIFEXITED(status)) << "killed by signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 130);
  EXPECT_TRUE(files().empty()) << "left behind: " << testing::PrintToString(files());
  EXPECT_NE(stderr_text().find("trainsim calibrate run: interrupted (SIGINT); the profile " +
                               profile.string() + " was not written; rerun: trainsim calibrate run --quick"),
            std::string::npos)
      << stderr_text();
}

}  // namespace
}  // namespace trainsim
