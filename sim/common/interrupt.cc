#include "sim/common/interrupt.h"

#include <atomic>
#include <pthread.h>
#include <signal.h>
#include <stdexcept>
#include <unistd.h>

#include "sim/common/atomic_file.h"

namespace trainsim {
namespace {

std::atomic<bool> g_active{false};
std::atomic<bool> g_stopping{false};
sigset_t g_watched;
sigset_t g_previous_mask;

void write_all(const std::string& text) {
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(STDERR_FILENO, text.data() + done, text.size() - done);
    if (n <= 0) return;
    done += static_cast<size_t>(n);
  }
}

}  // namespace

InterruptGuard::InterruptGuard(std::string program, std::string advice) {
  if (g_active.exchange(true)) throw std::logic_error("only one InterruptGuard at a time");
  g_stopping = false;
  sigemptyset(&g_watched);
  for (const int signal : {SIGINT, SIGTERM}) {
    struct sigaction current {};
    ::sigaction(signal, nullptr, &current);
    if (current.sa_handler != SIG_IGN) sigaddset(&g_watched, signal);
  }
  ::pthread_sigmask(SIG_BLOCK, &g_watched, &g_previous_mask);
  if (sigismember(&g_watched, SIGINT) != 1 && sigismember(&g_watched, SIGTERM) != 1) return;  // both ignored
  watcher_ = std::thread([interrupted = "\n" + program + ": interrupted (SIGINT); " + advice + "\n",
                          terminated = program + ": terminated (SIGTERM); " + advice + "\n"] {
    int signal = 0;
    while (::sigwait(&g_watched, &signal) == 0) {
      if (g_stopping) return;
      stop_new_temporaries();
      remove_pending_temporaries();
      write_all(signal == SIGINT ? interrupted : terminated);
      ::_exit(128 + signal);
    }
  });
}

InterruptGuard::~InterruptGuard() {
  if (watcher_.joinable()) {
    // Wakes the watcher with one of the signals it waits for; it returns without acting on it.
    g_stopping = true;
    ::pthread_kill(watcher_.native_handle(), sigismember(&g_watched, SIGTERM) == 1 ? SIGTERM : SIGINT);
    watcher_.join();
  }
  ::pthread_sigmask(SIG_SETMASK, &g_previous_mask, nullptr);
  g_active = false;
}

}  // namespace trainsim
