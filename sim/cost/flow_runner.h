// Plays collective schedules (sim/cost/collective.h) on the SimGrid platform: phases in sequence,
// the flows of a phase concurrent, the phase latency before its flows start.
//
// Two ways to issue flows, because SimGrid 3.32 keeps every host-to-host ("sendto") transfer in
// one global list that it scans linearly whenever a transfer ends, which makes n concurrent
// sendto transfers cost O(n^2) (measured: 16k at once take 1 s of wall time, 32k 5 s):
//   - member side (scales): each member GPU's actor, running on that GPU's host, posts its own
//     outgoing flows (mailbox puts) and its incoming ones (gets) and waits for them: run_member()
//     or, to overlap with other work, start_member_flows() per phase.
//   - transfers: start_transfers() / start_host_copy() start host-to-host transfers from any
//     context (an actor or maestro), for copies and small numbers of flows.
// run() combines both for one caller that stands for the whole collective.
// Everything here must run in the simulation's thread; nothing is thread-safe.
#ifndef TRAINSIM_SIM_COST_FLOW_RUNNER_H_
#define TRAINSIM_SIM_COST_FLOW_RUNNER_H_

#include <span>
#include <vector>

#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Engine.hpp>

#include "sim/cost/collective.h"
#include "sim/cost/link_load.h"
#include "sim/platform/simgrid_platform.h"

namespace trainsim::cost {

// Which flows of each phase leave and enter each GPU. Keeps a reference to `schedule`, which must
// outlive it; build one per schedule and share it between the members' actors.
class ScheduleIndex {
 public:
  explicit ScheduleIndex(const CollectiveSchedule& schedule);

  const CollectiveSchedule& schedule() const { return schedule_; }
  // Indices into schedule().phases[phase].flows; empty for a GPU that is not a member.
  std::span<const int> outgoing(size_t phase, int gpu) const { return slice(phase, gpu, true); }
  std::span<const int> incoming(size_t phase, int gpu) const { return slice(phase, gpu, false); }

 private:
  std::span<const int> slice(size_t phase, int gpu, bool out) const;

  const CollectiveSchedule& schedule_;
  std::vector<int> member_gpus_;  // sorted
  // Per phase and direction: CSR offsets over member_gpus_ and the flow indices.
  std::vector<std::vector<int>> out_offsets_, out_flows_, in_offsets_, in_flows_;
};

using config::CopyDirection;  // of the hardware-profile schema

class FlowRunner {
 public:
  // Phases of at most this many flows are issued as host-to-host transfers by run(): a sendto
  // transfer costs about 4 ns per other sendto transfer in flight when it ends (SimGrid 3.32 scans
  // them in a list), a helper actor about 30 us to create. Measured with tools/bench-simulator:
  // DeepSeek-V3 with EP64 on 2,048 GPUs (512-flow all-to-alls, thousands in flight) takes 52 s
  // at 128, 190 s at 512; GPT-3 175B on 1,024 GPUs and Llama-3 405B on 16,384 are the same at
  // both; 32 doubles Llama-3 405B's time.
  static constexpr size_t kDirectFlowLimit = 128;

  // `platform` must outlive the runner.
  explicit FlowRunner(const platform::Platform& platform, size_t direct_flow_limit = kDirectFlowLimit)
      : platform_(platform), direct_flow_limit_(direct_flow_limit) {}

  // From now on, the flows and copies that run(), run_member() and host_copy() complete are added to
  // `load` (nullptr: no longer), which must outlive the runner's use of it.
  void record_into(LinkLoad* load) { load_ = load; }

  // Blocking, from any actor: plays the whole schedule (every member's flows), phase after phase,
  // each after its latency, and returns when the last flow has completed. Phases with more than
  // `direct_flow_limit` flows run on member side, with one helper actor per member GPU. This is
  // what a caller that stands for the whole collective (one actor per collective) should use.
  void run(const CollectiveSchedule& schedule, int tag) const;

  // Member side. Starts `gpu`'s outgoing and incoming flows of phase `phase` (not its latency)
  // and returns them; the phase is over for `gpu` when they have all completed. Call from an
  // actor running on gpu's host. `tag` separates collectives that may run at the same time
  // between the same GPUs (e.g. one per communicator): flows match only within one tag.
  std::vector<simgrid::s4u::CommPtr> start_member_flows(const ScheduleIndex& index, size_t phase, int gpu,
                                                        int tag) const;
  // Member side, blocking: for each phase, sleeps its latency, starts the member's flows and waits
  // for them. Same calling context as start_member_flows.
  void run_member(const ScheduleIndex& index, int gpu, int tag) const;

  // Starts `flows` now as host-to-host transfers between their GPUs and returns them. Any context.
  std::vector<simgrid::s4u::CommPtr> start_transfers(const std::vector<Flow>& flows) const;
  // Starts a copy of `bytes` between `gpu` and its node's host memory (no latency). Any context.
  simgrid::s4u::CommPtr start_host_copy(int gpu, CopyDirection direction, double bytes) const;
  // Blocking, from any actor: the copy of `bytes` of every GPU of `gpus`, started together and
  // waited for.
  void host_copies(const std::vector<int>& gpus, CopyDirection direction, double bytes) const;
  void host_copy(int gpu, CopyDirection direction, double bytes) const {
    host_copies({gpu}, direction, bytes);
  }

 private:
  // Waits for the flows start_member_flows returned and records the member's outgoing ones.
  void finish_member_flows(const ScheduleIndex& index, size_t phase, int gpu,
                           const std::vector<simgrid::s4u::CommPtr>& comms) const;
  void record(const Flow& flow, const simgrid::s4u::Comm& comm) const;

  const platform::Platform& platform_;
  size_t direct_flow_limit_;
  LinkLoad* load_ = nullptr;
};

// Runs `schedules` one after the other in a fresh engine, each starting when the previous one has
// completed on all of its members, with one actor per member GPU (tag 0), and returns each one's
// duration in simulated seconds. Runs `engine` to completion: call once per process, after the
// platform is built and with nothing else scheduled. Each actor maps a stack and a guard page, so
// Linux's default vm.max_map_count (65530) caps this at about 32,000 member GPUs.
std::vector<double> run_sequentially(simgrid::s4u::Engine& engine, const platform::Platform& platform,
                                     const std::vector<CollectiveSchedule>& schedules);

}  // namespace trainsim::cost

#endif  // TRAINSIM_SIM_COST_FLOW_RUNNER_H_
