// Ending a command-line program cleanly on SIGINT (Ctrl-C) and SIGTERM (kill, job schedulers):
// no half-written output is left behind, and the user is told what happened and what to do next.
#ifndef TRAINSIM_SIM_COMMON_INTERRUPT_H_
#define TRAINSIM_SIM_COMMON_INTERRUPT_H_

#include <string>
#include <thread>

namespace trainsim {

// While an InterruptGuard lives, SIGINT and SIGTERM remove the temporary file of every AtomicFile
// still being written (sim/common/atomic_file.h), print "<program>: interrupted (SIGINT); <advice>"
// on stderr and end the process at once with status 128 + signal (130 for SIGINT, 143 for SIGTERM),
// without running destructors or flushing stdout. Outputs already committed stay as they are.
//
// The signals are blocked and taken by a watcher thread (sigwait), so a library that installs its
// own handler later (SimGrid does, for SIGINT) cannot take them over. Create the guard before any
// other thread, so that every thread inherits the blocked signals; a child forked meanwhile inherits
// them blocked too and must unblock them to be interruptible. A signal the process was started
// ignoring (nohup, a script's background job) stays ignored. For programs only, never for library
// code; one guard at a time (a second one throws std::logic_error). Destruction restores the
// signal mask.
class InterruptGuard {
 public:
  // `advice` says how to resume or rerun, e.g. "nothing was written; rerun: trainsim run x.yaml".
  InterruptGuard(std::string program, std::string advice);
  ~InterruptGuard();
  InterruptGuard(const InterruptGuard&) = delete;
  InterruptGuard& operator=(const InterruptGuard&) = delete;

 private:
  std::thread watcher_;
};

}  // namespace trainsim

#endif  // TRAINSIM_SIM_COMMON_INTERRUPT_H_
