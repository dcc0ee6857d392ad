#include "sim/common/isolated.h"

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <poll.h>
#include <signal.h>
#include <stdexcept>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

#include <fmt/format.h>

namespace trainsim {
namespace {

using Clock = std::chrono::steady_clock;

struct Child {
  size_t task = 0;
  pid_t pid = -1;
  int fd = -1;  // read end of the child's result pipe
  std::string payload;
  Clock::time_point started;
  bool timed_out = false;
};

void write_all(int fd, const std::string& data) {
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    done += static_cast<size_t>(n);
  }
}

// In the child: runs the task and sends 'V' + JSON or 'E' + message. Never returns.
[[noreturn]] void run_child(int fd, size_t index, const std::function<nlohmann::json(size_t)>& task) {
  std::string message;
  int status = 0;
  try {
    message = 'V';
    message += task(index).dump();
  } catch (const std::exception& e) {
    message = 'E';
    message += e.what();
    status = 1;
  } catch (...) {
    message = "Eunknown exception";
    status = 1;
  }
  write_all(fd, message);
  ::close(fd);
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  ::_exit(status);
}

Child start(size_t index, const std::function<nlohmann::json(size_t)>& task) {
  int fds[2];
  if (::pipe(fds) != 0) throw std::runtime_error(fmt::format("pipe: {}", std::strerror(errno)));
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    throw std::runtime_error(fmt::format("fork: {}", std::strerror(errno)));
  }
  if (pid == 0) {
    ::close(fds[0]);
    run_child(fds[1], index, task);
  }
  ::close(fds[1]);
  return Child{index, pid, fds[0], {}, Clock::now(), false};
}

// Reaps `child` (whose pipe reached end of file) and decodes what it sent.
IsolatedResult finish(Child& child, double time_limit_s) {
  ::close(child.fd);
  int status = 0;
  while (::waitpid(child.pid, &status, 0) < 0 && errno == EINTR) {
  }
  IsolatedResult result;
  if (child.timed_out) {
    result.error = fmt::format("stopped after exceeding the time limit of {:g} s", time_limit_s);
  } else if (WIFSIGNALED(status)) {
    result.error = fmt::format("the task's process died of signal {} ({})", WTERMSIG(status),
                               ::strsignal(WTERMSIG(status)));
  } else if (child.payload.empty()) {
    result.error = fmt::format("the task's process exited with status {} without a result",
                               WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  } else if (child.payload[0] == 'V') {
    try {
      result.value = nlohmann::json::parse(child.payload.begin() + 1, child.payload.end());
      result.ok = true;
    } catch (const nlohmann::json::exception& e) {
      result.error = fmt::format("the task's result is not valid JSON: {}", e.what());
    }
  } else {
    result.error = child.payload.substr(1);
  }
  return result;
}

void kill_all(std::vector<Child>& running) {
  for (Child& child : running) {
    ::kill(child.pid, SIGKILL);
    ::close(child.fd);
    int status = 0;
    while (::waitpid(child.pid, &status, 0) < 0 && errno == EINTR) {
    }
  }
  running.clear();
}

}  // namespace

void run_isolated(size_t count, const IsolatedOptions& options,
                  const std::function<nlohmann::json(size_t)>& task,
                  const std::function<void(size_t, IsolatedResult)>& on_done,
                  const std::function<bool()>& stop) {
  if (options.jobs < 1) throw std::invalid_argument("run_isolated: jobs must be at least 1");
  std::vector<Child> running;
  size_t next = 0;
  try {
    while (next < count || !running.empty()) {
      if (stop && stop()) break;
      while (next < count && running.size() < static_cast<size_t>(options.jobs)) {
        running.push_back(start(next++, task));
      }
      std::vector<pollfd> fds;
      for (const Child& child : running) fds.push_back({child.fd, POLLIN, 0});
      int wait_ms = -1;
      if (options.time_limit_s > 0) {
        const auto now = Clock::now();
        double soonest_s = options.time_limit_s;
        for (const Child& child : running) {
          const double left_s =
              options.time_limit_s - std::chrono::duration<double>(now - child.started).count();
          soonest_s = std::min(soonest_s, left_s);
        }
        wait_ms = static_cast<int>(std::max(0.0, soonest_s) * 1000) + 1;
      }
      if (::poll(fds.data(), fds.size(), wait_ms) < 0) {
        if (errno == EINTR) continue;
        throw std::runtime_error(fmt::format("poll: {}", std::strerror(errno)));
      }
      for (size_t k = running.size(); k-- > 0;) {
        Child& child = running[k];
        bool ended = false;
        if (fds[k].revents & (POLLIN | POLLHUP | POLLERR)) {
          char buffer[65536];
          const ssize_t n = ::read(child.fd, buffer, sizeof buffer);
          if (n > 0) {
            child.payload.append(buffer, static_cast<size_t>(n));
          } else if (n == 0 || errno != EINTR) {
            ended = true;
          }
        }
        if (!ended && options.time_limit_s > 0 &&
            std::chrono::duration<double>(Clock::now() - child.started).count() > options.time_limit_s) {
          ::kill(child.pid, SIGKILL);
          child.timed_out = true;
          ended = true;
        }
        if (!ended) continue;
        Child done = child;
        running.erase(running.begin() + static_cast<std::ptrdiff_t>(k));
        on_done(done.task, finish(done, options.time_limit_s));
      }
    }
  } catch (...) {
    kill_all(running);
    throw;
  }
  kill_all(running);
}

}  // namespace trainsim
