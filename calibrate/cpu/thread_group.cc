#include "calibrate/cpu/thread_group.h"

#include <stdexcept>

namespace trainsim::calibrate::cpu {

ThreadGroup::ThreadGroup(int ranks) : barrier_(ranks > 0 ? ranks : 1) {
  if (ranks < 1) throw std::invalid_argument("a thread group needs at least one rank");
  threads_.reserve(static_cast<size_t>(ranks));
  for (int rank = 0; rank < ranks; ++rank) threads_.emplace_back([this, rank] { loop(rank); });
}

ThreadGroup::~ThreadGroup() {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  for (std::thread& t : threads_) t.join();
}

void ThreadGroup::run(const std::function<void(int rank)>& work) {
  std::unique_lock<std::mutex> lock(mutex_);
  work_ = &work;
  finished_ = 0;
  ++generation_;
  wake_.notify_all();
  done_.wait(lock, [this] { return finished_ == size(); });
  work_ = nullptr;
}

void ThreadGroup::loop(int rank) {
  long seen = 0;
  for (;;) {
    const std::function<void(int)>* work = nullptr;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
      work = work_;
    }
    (*work)(rank);
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      ++finished_;
    }
    done_.notify_one();
  }
}

}  // namespace trainsim::calibrate::cpu
