// Timing on the host clock (std::chrono::steady_clock), the CPU backend's counterpart of CUDA
// events.
#ifndef TRAINSIM_CALIBRATE_CPU_HOST_TIMER_H_
#define TRAINSIM_CALIBRATE_CPU_HOST_TIMER_H_

#include <functional>
#include <vector>

#include "calibrate/backend.h"

namespace trainsim::calibrate::cpu {

// Calls run(set) for the policy's warm-up runs, then times its repetitions (each as many runs as
// runs_per_repetition asks for, from the duration of the last warm-up run), the set cycling through
// 0..sets-1 from run to run. Returns seconds per run, one entry per repetition.
std::vector<double> time_on_host(const TimingPolicy& policy, int sets,
                                 const std::function<void(int set)>& run);

// Seconds since an arbitrary fixed point of the steady clock.
double now_s();

}  // namespace trainsim::calibrate::cpu

#endif  // TRAINSIM_CALIBRATE_CPU_HOST_TIMER_H_
