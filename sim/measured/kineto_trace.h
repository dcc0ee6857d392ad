// Reading a PyTorch profiler trace (Kineto's Chrome trace JSON, what
// torch.profiler.profile(...).export_chrome_trace and tensorboard_trace_handler write) into the
// steps of one GPU. Steps are the profiler's "ProfilerStep#N" spans (prof.step() once per training
// iteration); each GPU kernel, copy and memset belongs to the step whose host span launched it
// (matched through the launch's correlation id; an activity without one by its own start). A step's
// GPU window runs from its first activity to the next step's first activity (the last step's: its
// host span's length or its activities' end, whichever is later), so the windows tile the GPU's
// timeline and a step's time is the GPU's period, not the host's. PyTorch's record of each
// collective and send/receive call (`record_param_comms`) gives the communication volume per step.
#ifndef TRAINSIM_SIM_MEASURED_KINETO_TRACE_H_
#define TRAINSIM_SIM_MEASURED_KINETO_TRACE_H_

#include <cstdint>
#include <filesystem>
#include <istream>
#include <optional>
#include <string>
#include <vector>

#include "sim/measured/activity.h"

namespace trainsim::measured {

struct TraceOptions {
  std::optional<int64_t> device;  // the GPU to read; default: the one busiest in the trace
  int64_t skip_steps = 0;         // leading steps left out (warm-up the profiler's schedule kept)
};

// One kernel (or copy) name of a trace: its GPU time and launches per kept step.
struct KernelTotal {
  std::string name;
  ActivityClass cls = ActivityClass::kMemory;
  double time_s = 0;
  double count = 0;
};

// The collectives and sends/receives of one kind and group size a trace's steps called, per kept step,
// from PyTorch's `record_param_comms` host events. Kinds as the simulator names them (all_reduce,
// all_gather, reduce_scatter, all_to_all, barrier, broadcast, send, recv); bytes as nccl-tests counts a
// message: the larger of input and output (all-gather: the gathered output; reduce-scatter: the full
// input).
struct CommTotal {
  std::string kind;
  int64_t group_size = 0;
  double calls = 0;
  double bytes = 0;
};

struct MeasuredTrace {
  std::optional<int64_t> rank;  // the trace's distributedInfo, when it has one
  std::optional<int64_t> world_size;
  int64_t device = 0;                   // the GPU read
  std::vector<int64_t> other_devices;   // GPUs the trace also holds, ascending
  std::vector<std::string> step_names;  // the kept steps, "ProfilerStep#N", in order
  std::vector<StepProfile> steps;       // of step_names
  int64_t skipped_steps = 0;
  int64_t unattributed = 0;          // the device's activities launched outside every step
  std::vector<KernelTotal> kernels;  // every name the device ran in the kept steps, longest first
  std::vector<CommTotal> comms;      // by kind, then group size; empty when PyTorch recorded none
  int64_t comms_unknown = 0;         // record_param_comms events of an unknown collective or dtype
};

// Reads the trace at `path`. Throws config::ConfigError, located at the file (and at the line and
// column of a JSON syntax error), when the file cannot be read, is compressed, is not a Chrome trace,
// holds no GPU activity or no ProfilerStep span, when an event's time is out of range, when
// options.device is not in it, when fewer steps than options.skip_steps + 1 remain, or when a kept
// step launched nothing on the device.
MeasuredTrace read_kineto_trace(const std::filesystem::path& path, const TraceOptions& options = {});
// The same from `in`, whose errors name `file`.
MeasuredTrace read_kineto_trace(std::istream& in, const std::string& file, const TraceOptions& options = {});

}  // namespace trainsim::measured

#endif  // TRAINSIM_SIM_MEASURED_KINETO_TRACE_H_
