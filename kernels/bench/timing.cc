#include "kernels/bench/timing.h"

#include <algorithm>
#include <vector>

#include "kernels/cuda/check.h"
#include "kernels/cuda/event.h"

namespace trainsim::kernels::bench {

Timing time_on_stream(cudaStream_t stream, int warmup, int runs, const std::function<void()>& enqueue) {
  for (int i = 0; i < warmup; ++i) {
    enqueue();
  }
  CUDA_CHECK(cudaStreamSynchronize(stream));
  std::vector<Event> starts;
  std::vector<Event> ends;
  for (int i = 0; i < runs; ++i) {
    starts.emplace_back(Event::Timing::kEnabled);
    ends.emplace_back(Event::Timing::kEnabled);
  }
  for (int i = 0; i < runs; ++i) {
    starts[i].record(stream);
    enqueue();
    ends[i].record(stream);
  }
  CUDA_CHECK(cudaStreamSynchronize(stream));
  std::vector<double> ms;
  for (int i = 0; i < runs; ++i) {
    ms.push_back(elapsed_ms(starts[i], ends[i]));
  }
  std::sort(ms.begin(), ms.end());
  return {ms[ms.size() / 2], ms.front(), runs};
}

}  // namespace trainsim::kernels::bench
