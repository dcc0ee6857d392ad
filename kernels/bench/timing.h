// Timing of enqueued GPU work with CUDA events: warm-up runs, then the median of timed runs.
#ifndef TRAINSIM_KERNELS_BENCH_TIMING_H_
#define TRAINSIM_KERNELS_BENCH_TIMING_H_

#include <functional>

#include <cuda_runtime_api.h>

namespace trainsim::kernels::bench {

struct Timing {
  double median_ms = 0.0;
  double min_ms = 0.0;
  int runs = 0;
};

// Calls `enqueue` (which enqueues the work on `stream`) `warmup` times, then `runs` times, each timed
// run bracketed by events on `stream`. Work on other streams must be joined back to `stream` by
// `enqueue`. Throws GpuError.
Timing time_on_stream(cudaStream_t stream, int warmup, int runs, const std::function<void()>& enqueue);

}  // namespace trainsim::kernels::bench

#endif  // TRAINSIM_KERNELS_BENCH_TIMING_H_
