// A fixed set of worker threads that act as the ranks of the CPU backend: each stands for one
// device, and collectives between them are copies through shared memory.
#ifndef TRAINSIM_CALIBRATE_CPU_THREAD_GROUP_H_
#define TRAINSIM_CALIBRATE_CPU_THREAD_GROUP_H_

#include <barrier>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace trainsim::calibrate::cpu {

class ThreadGroup {
 public:
  // Starts `ranks` (>= 1) threads, idle until run() is called. Throws std::invalid_argument for
  // ranks < 1.
  explicit ThreadGroup(int ranks);
  // Stops and joins the threads. Must not be called while run() is in progress.
  ~ThreadGroup();
  ThreadGroup(const ThreadGroup&) = delete;
  ThreadGroup& operator=(const ThreadGroup&) = delete;

  int size() const { return static_cast<int>(threads_.size()); }

  // Calls work(rank) on every rank's thread at once and returns when all have returned. `work`
  // must not throw. Only one caller at a time.
  void run(const std::function<void(int rank)>& work);

  // Blocks the calling rank until every rank has called it (to be called from inside run()'s work,
  // by every rank the same number of times).
  void barrier() { barrier_.arrive_and_wait(); }

 private:
  void loop(int rank);

  std::barrier<> barrier_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable done_;
  const std::function<void(int)>* work_ = nullptr;
  long generation_ = 0;
  int finished_ = 0;
  bool stop_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace trainsim::calibrate::cpu

#endif  // TRAINSIM_CALIBRATE_CPU_THREAD_GROUP_H_
