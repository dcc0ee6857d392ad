#include "calibrate/cuda/event_timer.h"

#include <algorithm>
#include <cmath>

#include "kernels/cuda/check.h"
#include "kernels/cuda/device.h"
#include "kernels/cuda/event.h"

namespace trainsim::calibrate::cuda {

using kernels::Event;

std::vector<double> time_with_events(cudaStream_t stream, const TimingPolicy& policy, int sets,
                                     const std::function<void(int set)>& enqueue) {
  return time_with_events_on({kernels::current_device()}, {stream}, policy, sets, enqueue);
}

std::vector<double> time_with_events_on(const std::vector<int>& devices,
                                        const std::vector<cudaStream_t>& streams, const TimingPolicy& policy,
                                        int sets, const std::function<void(int set)>& enqueue) {
  SetRotation rotation(sets);
  const auto synchronize = [&] {
    for (const cudaStream_t s : streams) CUDA_CHECK(cudaStreamSynchronize(s));
  };
  // Events of repetition r on stream i: starts[r][i], ends[r][i], created on the stream's device.
  const auto make_events = [&](size_t count) {
    std::vector<std::vector<Event>> events(count);
    for (size_t r = 0; r < count; ++r) {
      for (const int device : devices) {
        const kernels::DeviceGuard guard(device);
        events[r].emplace_back(Event::Timing::kEnabled);
      }
    }
    return events;
  };
  const auto record = [&](std::vector<Event>& events) {
    for (size_t i = 0; i < streams.size(); ++i) {
      const kernels::DeviceGuard guard(devices[i]);
      events[i].record(streams[i]);
    }
  };
  const auto slowest_s = [&](const std::vector<Event>& starts, const std::vector<Event>& ends) {
    double slowest = 0;
    for (size_t i = 0; i < streams.size(); ++i)
      slowest = std::max(slowest, 1e-3 * kernels::elapsed_ms(starts[i], ends[i]));
    return slowest;
  };

  for (int i = 0; i < policy.warmup; ++i) enqueue(rotation.next());
  synchronize();
  std::vector<std::vector<Event>> probe_start = make_events(1);
  std::vector<std::vector<Event>> probe_end = make_events(1);
  record(probe_start[0]);
  enqueue(rotation.next());
  record(probe_end[0]);
  synchronize();
  const double probe_s = slowest_s(probe_start[0], probe_end[0]);
  const int runs = runs_per_repetition(probe_s, policy);
  if (policy.settle_s > 0 && probe_s > 0) {
    const double settle_runs = std::min(std::ceil(policy.settle_s / probe_s), 1e6);
    for (int i = 0; i < static_cast<int>(settle_runs); ++i) enqueue(rotation.next());
  }

  const size_t repetitions = static_cast<size_t>(std::max(1, policy.repetitions));
  std::vector<std::vector<Event>> starts = make_events(repetitions);
  std::vector<std::vector<Event>> ends = make_events(repetitions);
  for (size_t r = 0; r < repetitions; ++r) {
    record(starts[r]);
    for (int i = 0; i < runs; ++i) enqueue(rotation.next());
    record(ends[r]);
  }
  synchronize();
  std::vector<double> durations;
  durations.reserve(repetitions);
  for (size_t r = 0; r < repetitions; ++r) durations.push_back(slowest_s(starts[r], ends[r]) / runs);
  return durations;
}

}  // namespace trainsim::calibrate::cuda
