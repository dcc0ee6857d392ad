#include "calibrate/cpu/host_timer.h"

#include <algorithm>
#include <chrono>

namespace trainsim::calibrate::cpu {

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::vector<double> time_on_host(const TimingPolicy& policy, int sets,
                                 const std::function<void(int set)>& run) {
  SetRotation rotation(sets);
  double single_s = 0;
  for (int i = 0; i < std::max(1, policy.warmup); ++i) {
    const double start = now_s();
    run(rotation.next());
    single_s = now_s() - start;
  }
  const int runs = runs_per_repetition(single_s, policy);
  std::vector<double> durations;
  durations.reserve(static_cast<size_t>(policy.repetitions));
  for (int rep = 0; rep < policy.repetitions; ++rep) {
    const double start = now_s();
    for (int i = 0; i < runs; ++i) run(rotation.next());
    durations.push_back((now_s() - start) / runs);
  }
  return durations;
}

}  // namespace trainsim::calibrate::cpu
