#include "sim/common/atomic_file.h"

#include <array>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <limits.h>
#include <random>
#include <stdexcept>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <fmt/format.h>

namespace trainsim {
namespace {

// The temporaries of open writers, for remove_pending_temporaries(). A slot is claimed (kWriting)
// before the temporary file is created and published (kPending) once its path is copied in, so a
// signal handler only ever reads complete paths, and stop_new_temporaries() can wait for the files
// being created.
constexpr int kFree = 0;
constexpr int kWriting = 1;
constexpr int kPending = 2;
constexpr size_t kSlots = 64;

struct Slot {
  std::atomic<int> state{kFree};
  char path[PATH_MAX];
};
std::array<Slot, kSlots> g_slots;
std::atomic<bool> g_stopped{false};

// A free slot, now kWriting; -1 when all are taken. Once stop_new_temporaries() ran, never returns:
// the program is about to end, and no new file may appear behind its cleanup.
int claim_slot() {
  int slot = -1;
  for (size_t i = 0; i < kSlots && slot < 0; ++i) {
    int expected = kFree;
    if (g_slots[i].state.compare_exchange_strong(expected, kWriting)) slot = static_cast<int>(i);
  }
  if (g_stopped.load()) {  // checked after the claim: the stopping thread waits for claimed slots
    if (slot >= 0) g_slots[static_cast<size_t>(slot)].state.store(kFree);
    for (;;) ::pause();  // the stopping thread ends the process
  }
  return slot;
}

// Publishes `temporary` in `slot` (claimed) and returns the slot, or frees it and returns -1 when
// the path does not fit.
int publish(int slot, const std::filesystem::path& temporary) {
  if (slot < 0) return -1;
  Slot& s = g_slots[static_cast<size_t>(slot)];
  const std::string& text = temporary.native();
  if (text.size() >= PATH_MAX) {
    s.state.store(kFree);
    return -1;
  }
  std::memcpy(s.path, text.c_str(), text.size() + 1);
  s.state.store(kPending);
  return slot;
}

void unlist(int slot) {
  if (slot >= 0) g_slots[static_cast<size_t>(slot)].state.store(kFree);
}

// Creates ".NAME.xxxxxx" (six random lowercase letters or digits) beside `destination` with O_EXCL
// and mode 0666, so the umask applies as for any new file; returns its descriptor and its name.
int create_temporary(const std::filesystem::path& destination, std::filesystem::path& temporary) {
  thread_local std::mt19937_64 random{std::random_device{}()};
  static constexpr char kAlphabet[] = "0123456789abcdefghijklmnopqrstuvwxyz";
  const std::filesystem::path directory =
      destination.has_parent_path() ? destination.parent_path() : std::filesystem::path(".");
  for (int attempt = 0; attempt < 100; ++attempt) {
    std::string tag(6, '0');
    for (char& c : tag) c = kAlphabet[random() % (sizeof(kAlphabet) - 1)];
    temporary = directory / fmt::format(".{}.{}", destination.filename().string(), tag);
    const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0) return fd;
    if (errno != EEXIST) {
      throw std::runtime_error(fmt::format("cannot write {}: cannot create a file in {}: {}",
                                           destination.string(), directory.string(), std::strerror(errno)));
    }
  }
  throw std::runtime_error(
      fmt::format("cannot write {}: no free temporary name in {}", destination.string(), directory.string()));
}

// fsync of the directory holding `path`, so the rename itself survives a power loss.
void sync_directory(const std::filesystem::path& path) {
  const std::filesystem::path directory = path.has_parent_path() ? path.parent_path() : ".";
  const int fd = ::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;  // the rename is done; durability is best effort where the directory can't be opened
  ::fsync(fd);
  ::close(fd);
}

}  // namespace

AtomicFile::AtomicFile(std::filesystem::path destination, FileMode mode)
    : destination_(std::move(destination)), mode_(mode) {
  slot_ = claim_slot();
  try {
    fd_ = create_temporary(destination_, temporary_);
  } catch (...) {
    unlist(slot_);
    throw;
  }
  // Opened before the path is published: once the interrupt watcher may unlink the path, nothing
  // opens it by name again (a second open would create it anew behind the cleanup).
  out_.open(temporary_, std::ios::binary | std::ios::trunc);
  slot_ = publish(slot_, temporary_);
  if (!out_) {
    discard();
    throw std::runtime_error(
        fmt::format("cannot write {}: cannot open {}", destination_.string(), temporary_.string()));
  }
}

AtomicFile::~AtomicFile() { discard(); }

void AtomicFile::discard() noexcept {
  if (done_) return;
  done_ = true;
  if (out_.is_open()) out_.close();
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  ::unlink(temporary_.c_str());
  unlist(slot_);
}

void AtomicFile::commit() {
  if (done_) throw std::logic_error("AtomicFile::commit called twice");
  out_.flush();
  const bool written = static_cast<bool>(out_);
  out_.close();
  int error = 0;
  if (!written || out_.fail()) {
    error = EIO;
  } else if (::fsync(fd_) != 0) {
    error = errno;
  } else if (mode_ == FileMode::kReadOnly && ::fchmod(fd_, 0444) != 0) {
    error = errno;
  } else if (::rename(temporary_.c_str(), destination_.c_str()) != 0) {
    error = errno;
  }
  if (error != 0) {
    discard();
    throw std::runtime_error(fmt::format("cannot write {}: {}", destination_.string(), std::strerror(error)));
  }
  done_ = true;
  ::close(fd_);
  fd_ = -1;
  unlist(slot_);
  sync_directory(destination_);
}

void write_file_atomically(const std::filesystem::path& destination, std::string_view content,
                           FileMode mode) {
  AtomicFile file(destination, mode);
  file.stream().write(content.data(), static_cast<std::streamsize>(content.size()));
  file.commit();
}

void remove_pending_temporaries() noexcept {
  for (Slot& slot : g_slots) {
    if (slot.state.load() == kPending) ::unlink(slot.path);
  }
}

void stop_new_temporaries() noexcept {
  g_stopped.store(true);
  // Writers that claimed a slot before the flag was set are creating and opening their file:
  // microseconds, unless the file system stalls; give up waiting after about a second.
  for (int round = 0; round < 1000; ++round) {
    bool creating = false;
    for (const Slot& slot : g_slots) creating = creating || slot.state.load() == kWriting;
    if (!creating) return;
    const struct timespec millisecond { 0, 1000000 };
    ::nanosleep(&millisecond, nullptr);
  }
}

}  // namespace trainsim
