// Output files that are either completely written or not there at all. Every file trainsim writes
// (traces, graph dumps, hardware profiles, reports) goes through AtomicFile: the content goes to a
// temporary file beside the destination, which is flushed to disk and renamed over the destination
// only once it is complete. A crash, an exception or a signal mid-write leaves the destination as it
// was (absent, or the previous complete version).
#ifndef TRAINSIM_SIM_COMMON_ATOMIC_FILE_H_
#define TRAINSIM_SIM_COMMON_ATOMIC_FILE_H_

#include <filesystem>
#include <fstream>
#include <string_view>

namespace trainsim {

enum class FileMode {
  kNormal,    // read-write for the owner, as the umask allows for others
  kReadOnly,  // 0444: files that must never be edited in place (hardware profiles)
};

// One file being written atomically. The temporary file is ".NAME.XXXXXX" in the destination's
// directory (same file system, so the rename is atomic). A writer destroyed before commit() (an
// exception, an early return) removes its temporary file; so does remove_pending_temporaries(), for
// signal handlers. One thread per writer; any number of writers may be open at once.
class AtomicFile {
 public:
  // Creates the temporary file. Throws std::runtime_error naming the directory when it cannot
  // (missing directory, no permission).
  explicit AtomicFile(std::filesystem::path destination, FileMode mode = FileMode::kNormal);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  // Where the content goes. Write errors are detected by commit().
  std::ostream& stream() { return out_; }
  // Flushes the content to disk, applies the mode, renames the temporary file over the destination
  // and flushes the directory entry. Throws std::runtime_error naming the destination and the
  // reason on any failure; the temporary file is then removed and the destination left untouched.
  // Call once.
  void commit();

  const std::filesystem::path& destination() const { return destination_; }
  const std::filesystem::path& temporary() const { return temporary_; }

 private:
  void discard() noexcept;

  std::filesystem::path destination_;
  std::filesystem::path temporary_;
  FileMode mode_;
  int fd_ = -1;    // the temporary file, kept open for fsync
  int slot_ = -1;  // its entry in the list of pending temporaries (-1: not listed)
  std::ofstream out_;
  bool done_ = false;
};

// Writes `content` to `destination` atomically (an AtomicFile, written and committed). Throws
// std::runtime_error like AtomicFile.
void write_file_atomically(const std::filesystem::path& destination, std::string_view content,
                           FileMode mode = FileMode::kNormal);

// Removes the temporary file of every AtomicFile neither committed nor destroyed yet, from any
// thread. Only calls unlink(2), so it is async-signal-safe too. For the end of an interrupted program
// (sim/common/interrupt.h). Temporaries whose path is longer than PATH_MAX, or beyond the first 64
// open at once, are removed by their writers only.
void remove_pending_temporaries() noexcept;

// For the end of a program: from now on no AtomicFile creates its temporary (a thread that tries
// blocks until the process ends), and those being created when this is called are waited for (at
// most about a second), so that remove_pending_temporaries() afterwards leaves nothing behind. Not
// async-signal-safe (it sleeps); call it from a thread, as sim/common/interrupt.h's watcher does.
void stop_new_temporaries() noexcept;

}  // namespace trainsim

#endif  // TRAINSIM_SIM_COMMON_ATOMIC_FILE_H_
