// Timing enqueued GPU work with CUDA events, per TimingPolicy: the CUDA backend's clock.
#ifndef TRAINSIM_CALIBRATE_CUDA_EVENT_TIMER_H_
#define TRAINSIM_CALIBRATE_CUDA_EVENT_TIMER_H_

#include <functional>
#include <vector>

#include <cuda_runtime_api.h>

#include "calibrate/backend.h"

namespace trainsim::calibrate::cuda {

// Calls enqueue(set) (which enqueues one run on `stream` and returns) for the warm-up runs, times one
// run to choose the runs per repetition, then times each repetition between two events on `stream`;
// `set` cycles through 0..sets-1 from run to run. Work on other streams must be joined back to
// `stream` by `enqueue`. Returns seconds per run, one entry per repetition. Throws GpuError.
std::vector<double> time_with_events(cudaStream_t stream, const TimingPolicy& policy, int sets,
                                     const std::function<void(int set)>& enqueue);

// As time_with_events, over several streams (one per device) at once: enqueue(set) enqueues one run
// on every stream; each repetition is timed per stream between its own events, and the slowest
// stream's time counts. `devices[i]` is the device of `streams[i]`.
std::vector<double> time_with_events_on(const std::vector<int>& devices,
                                        const std::vector<cudaStream_t>& streams, const TimingPolicy& policy,
                                        int sets, const std::function<void(int set)>& enqueue);

}  // namespace trainsim::calibrate::cuda

#endif  // TRAINSIM_CALIBRATE_CUDA_EVENT_TIMER_H_
