// AtomicFile (sim/common/atomic_file.h) and InterruptGuard (sim/common/interrupt.h): a destination
// is either the complete new content or left as it was, whatever happens mid-write.
#include "sim/common/atomic_file.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <signal.h>
#include <sstream>
#include <stdexcept>
#include <sys/stat.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

#include <gtest/gtest.h>

#include "sim/common/interrupt.h"

namespace trainsim {
namespace {

namespace fs = std::filesystem;

class AtomicFileTest : public testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "trainsim-atomic-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    std::error_code ec;
    fs::permissions(dir_, fs::perms::owner_all, ec);
    fs::remove_all(dir_, ec);
  }

  static std::string read(const fs::path& file) {
    std::ifstream in(file, std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }
  static void write(const fs::path& file, const std::string& text) { std::ofstream(file) << text; }
  size_t entries() const { return static_cast<size_t>(std::distance(fs::directory_iterator(dir_), {})); }

  fs::path dir_;
};

TEST_F(AtomicFileTest, CommitReplacesTheDestinationWithTheCompleteContent) {
  const fs::path out = dir_ / "report.json";
  write(out, "old");
  AtomicFile file(out);
  EXPECT_EQ(file.temporary().parent_path(), dir_);
  EXPECT_EQ(file.temporary().filename().string().rfind(".report.json.", 0), 0u) << file.temporary();
  file.stream() << "new content";
  EXPECT_EQ(read(out), "old") << "the destination changed before commit";
  file.commit();
  EXPECT_EQ(read(out), "new content");
  EXPECT_EQ(entries(), 1u) << "a temporary file was left behind";
}

TEST_F(AtomicFileTest, AbandonedWriterLeavesTheDestinationAndNoTemporary) {
  const fs::path out = dir_ / "trace.json";
  write(out, "previous trace");
  try {
    AtomicFile file(out);
    file.stream() << "half a tr";
    throw std::runtime_error("failed mid-write");
  } catch (const std::runtime_error&) {
  }
  EXPECT_EQ(read(out), "previous trace");
  EXPECT_EQ(entries(), 1u);
}

TEST_F(AtomicFileTest, ModesAreTheUmasksOrReadOnly) {
  write_file_atomically(dir_ / "normal", "x");
  write_file_atomically(dir_ / "profile.yaml", "y", FileMode::kReadOnly);
  const mode_t mask = ::umask(0);
  ::umask(mask);
  struct stat normal {};
  struct stat read_only {};
  ASSERT_EQ(::stat((dir_ / "normal").c_str(), &normal), 0);
  ASSERT_EQ(::stat((dir_ / "profile.yaml").c_str(), &read_only), 0);
  EXPECT_EQ(normal.st_mode & 0777, 0666 & ~mask);
  EXPECT_EQ(read_only.st_mode & 0777, 0444u);
}

TEST_F(AtomicFileTest, AMissingDirectoryIsReportedUpFront) {
  try {
    AtomicFile file(dir_ / "no-such-dir" / "out.json");
    FAIL() << "no error for a missing directory";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot write " + (dir_ / "no-such-dir" / "out.json").string()),
              std::string::npos)
        << e.what();
  }
}

TEST_F(AtomicFileTest, PendingTemporariesAreRemovedAndTheirCommitFails) {
  const fs::path out = dir_ / "out.json";
  write(out, "kept");
  AtomicFile first(out);
  AtomicFile second(dir_ / "other.json");
  first.stream() << "partial";
  EXPECT_EQ(entries(), 3u);
  remove_pending_temporaries();
  EXPECT_EQ(entries(), 1u) << "temporaries survived";
  EXPECT_THROW(first.commit(), std::runtime_error);
  EXPECT_EQ(read(out), "kept");
}

TEST_F(AtomicFileTest, ACommittedFileIsNotAPendingTemporary) {
  const fs::path out = dir_ / "done.json";
  write_file_atomically(out, "done");
  remove_pending_temporaries();
  EXPECT_EQ(read(out), "done");
}

TEST_F(AtomicFileTest, SigkillMidWriteLeavesThePreviousContent) {
  const fs::path out = dir_ / "profile.yaml";
  write(out, "previous profile");
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    AtomicFile file(out);
    file.stream() << "the first half of a new profile" << std::flush;
    ::kill(::getpid(), SIGKILL);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status));
  EXPECT_EQ(read(out), "previous profile");
}

// Once a program is stopping, no temporary may appear behind its cleanup: a writer that starts
// after stop_new_temporaries() blocks instead of creating its file, and one already open is removed.
// (The race this closes: a signal arriving between a writer's open(2) and the publication of its
// path left the temporary behind.)
TEST_F(AtomicFileTest, NoTemporaryAppearsAfterTheStop) {
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    AtomicFile open_before(dir_ / "before.json");
    stop_new_temporaries();
    std::thread late([this] {
      const AtomicFile late_file(dir_ / "late.json");
      ::pause();  // keeps it open until the process ends
    });
    late.detach();
    ::usleep(200000);  // the late writer has had time to create its file, were it allowed to
    const auto entries = std::distance(fs::directory_iterator(dir_), fs::directory_iterator());
    remove_pending_temporaries();
    ::_exit(entries == 1 && fs::is_empty(dir_) ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "a temporary was left behind";
}

// In a child: an InterruptGuard, a file being written, then `signal`. Returns the wait status.
int interrupted_child(const fs::path& out, int signal) {
  const pid_t child = ::fork();
  if (child == 0) {
    const InterruptGuard guard("writer", "nothing was written; rerun: writer");
    AtomicFile file(out);
    file.stream() << "partial" << std::flush;
    ::kill(::getpid(), signal);
    ::pause();
    ::_exit(0);
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  return status;
}

TEST_F(AtomicFileTest, InterruptGuardRemovesTemporariesAndExitsWith128PlusTheSignal) {
  for (const auto& [signal, code] : {std::pair{SIGINT, 130}, std::pair{SIGTERM, 143}}) {
    const int status = interrupted_child(dir_ / "out.json", signal);
    ASSERT_TRUE(WIFEXITED(status)) << "signal " << signal << " was not handled";
    EXPECT_EQ(WEXITSTATUS(status), code);
    EXPECT_EQ(entries(), 0u) << "after signal " << signal;
  }
}

TEST_F(AtomicFileTest, OnlyOneInterruptGuardAtATime) {
  const InterruptGuard guard("a", "b");
  EXPECT_THROW(InterruptGuard("c", "d"), std::logic_error);
}

}  // namespace
}  // namespace trainsim
