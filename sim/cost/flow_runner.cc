#include "sim/cost/flow_runner.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <set>

#include <fmt/format.h>
#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Barrier.hpp>
#include <simgrid/s4u/Mailbox.hpp>
#include <simgrid/simix.hpp>

#include "sim/platform/invariant.h"

namespace trainsim::cost {

namespace sg4 = simgrid::s4u;

namespace {

uint64_t wire_bytes(double bytes) { return static_cast<uint64_t>(std::llround(bytes)); }

// Flows carry no data: the same dummy payload goes everywhere and lands in the same sink.
int payload;
void* sink;

sg4::Mailbox* mailbox(int gpu, int tag, size_t phase) {
  return sg4::Mailbox::by_name(fmt::format("gpu{}:tag{}:phase{}", gpu, tag, phase));
}

}  // namespace

ScheduleIndex::ScheduleIndex(const CollectiveSchedule& schedule) : schedule_(schedule) {
  member_gpus_ = schedule.members;
  std::sort(member_gpus_.begin(), member_gpus_.end());
  const auto slot = [&](int gpu) {
    return static_cast<size_t>(std::lower_bound(member_gpus_.begin(), member_gpus_.end(), gpu) -
                               member_gpus_.begin());
  };
  const size_t members = member_gpus_.size();
  for (const Phase& phase : schedule.phases) {
    std::vector<int> out_offsets(members + 1, 0);
    std::vector<int> in_offsets(members + 1, 0);
    for (const Flow& f : phase.flows) {
      ++out_offsets[slot(f.src_gpu) + 1];
      ++in_offsets[slot(f.dst_gpu) + 1];
    }
    for (size_t m = 0; m < members; ++m) {
      out_offsets[m + 1] += out_offsets[m];
      in_offsets[m + 1] += in_offsets[m];
    }
    std::vector<int> out_flows(phase.flows.size());
    std::vector<int> in_flows(phase.flows.size());
    std::vector<int> out_next(out_offsets.begin(), out_offsets.end() - 1);
    std::vector<int> in_next(in_offsets.begin(), in_offsets.end() - 1);
    for (int i = 0; i < static_cast<int>(phase.flows.size()); ++i) {
      const Flow& f = phase.flows[static_cast<size_t>(i)];
      out_flows[static_cast<size_t>(out_next[slot(f.src_gpu)]++)] = i;
      in_flows[static_cast<size_t>(in_next[slot(f.dst_gpu)]++)] = i;
    }
    out_offsets_.push_back(std::move(out_offsets));
    out_flows_.push_back(std::move(out_flows));
    in_offsets_.push_back(std::move(in_offsets));
    in_flows_.push_back(std::move(in_flows));
  }
}

std::span<const int> ScheduleIndex::slice(size_t phase, int gpu, bool out) const {
  const auto it = std::lower_bound(member_gpus_.begin(), member_gpus_.end(), gpu);
  if (it == member_gpus_.end() || *it != gpu) return {};
  const size_t m = static_cast<size_t>(it - member_gpus_.begin());
  const std::vector<int>& offsets = (out ? out_offsets_ : in_offsets_)[phase];
  const std::vector<int>& flows = (out ? out_flows_ : in_flows_)[phase];
  return std::span<const int>(flows).subspan(static_cast<size_t>(offsets[m]),
                                             static_cast<size_t>(offsets[m + 1] - offsets[m]));
}

std::vector<sg4::CommPtr> FlowRunner::start_member_flows(const ScheduleIndex& index, size_t phase, int gpu,
                                                         int tag) const {
  const std::vector<Flow>& flows = index.schedule().phases[phase].flows;
  std::vector<sg4::CommPtr> comms;
  const size_t incoming = index.incoming(phase, gpu).size();
  for (size_t k = 0; k < incoming; ++k) comms.push_back(mailbox(gpu, tag, phase)->get_async<void>(&sink));
  for (const int i : index.outgoing(phase, gpu)) {
    const Flow& f = flows[static_cast<size_t>(i)];
    comms.push_back(mailbox(f.dst_gpu, tag, phase)->put_async(&payload, wire_bytes(f.bytes)));
  }
  return comms;
}

void FlowRunner::finish_member_flows(const ScheduleIndex& index, size_t phase, int gpu,
                                     const std::vector<sg4::CommPtr>& comms) const {
  sg4::Comm::wait_all(comms);
  if (load_ == nullptr) return;
  const std::vector<Flow>& flows = index.schedule().phases[phase].flows;
  const std::span<const int> outgoing = index.outgoing(phase, gpu);
  const size_t first = comms.size() - outgoing.size();  // the puts follow the gets
  for (size_t k = 0; k < outgoing.size(); ++k) {
    record(flows[static_cast<size_t>(outgoing[k])], *comms[first + k]);
  }
}

void FlowRunner::record(const Flow& flow, const sg4::Comm& comm) const {
  if (load_ != nullptr) {
    load_->add_flow(flow.src_gpu, flow.dst_gpu, flow.bytes, comm.get_start_time(), comm.get_finish_time());
  }
}

void FlowRunner::run_member(const ScheduleIndex& index, int gpu, int tag) const {
  for (size_t p = 0; p < index.schedule().phases.size(); ++p) {
    const double latency = index.schedule().phases[p].latency_s;
    if (latency > 0) sg4::this_actor::sleep_for(latency);
    finish_member_flows(index, p, gpu, start_member_flows(index, p, gpu, tag));
  }
}

void FlowRunner::run(const CollectiveSchedule& schedule, int tag) const {
  std::optional<ScheduleIndex> index;  // built for the first phase that needs it
  for (size_t p = 0; p < schedule.phases.size(); ++p) {
    const Phase& phase = schedule.phases[p];
    if (phase.latency_s > 0) sg4::this_actor::sleep_for(phase.latency_s);
    if (phase.flows.size() <= direct_flow_limit_) {
      const std::vector<sg4::CommPtr> comms = start_transfers(phase.flows);
      sg4::Comm::wait_all(comms);
      for (size_t i = 0; i < comms.size(); ++i) record(phase.flows[i], *comms[i]);
      continue;
    }
    if (!index) index.emplace(schedule);
    std::vector<sg4::ActorPtr> helpers;
    simgrid::kernel::actor::simcall_answered([&] {  // one simcall for all, as start_transfers
      for (const int gpu : schedule.members) {
        if (index->outgoing(p, gpu).empty() && index->incoming(p, gpu).empty()) continue;
        helpers.push_back(sg4::Actor::create("flows", platform_.gpu_host(gpu), [this, &index, p, gpu, tag] {
          finish_member_flows(*index, p, gpu, start_member_flows(*index, p, gpu, tag));
        }));
      }
    });
    for (const sg4::ActorPtr& helper : helpers) helper->join();
  }
}

std::vector<sg4::CommPtr> FlowRunner::start_transfers(const std::vector<Flow>& flows) const {
  std::vector<sg4::CommPtr> comms;
  comms.reserve(flows.size());
  // Started in one simcall: from an actor, each start is a simcall of its own (a switch to maestro
  // and back), which made up a seventh of a collapsed run. In maestro, the starts run directly.
  simgrid::kernel::actor::simcall_answered([&] {
    for (const Flow& f : flows) {
      TRAINSIM_PLATFORM_CHECK(f.src_gpu != f.dst_gpu, "flow from GPU {} to itself", f.src_gpu);
      comms.push_back(sg4::Comm::sendto_async(platform_.gpu_host(f.src_gpu), platform_.gpu_host(f.dst_gpu),
                                              wire_bytes(f.bytes)));
    }
  });
  return comms;
}

sg4::CommPtr FlowRunner::start_host_copy(int gpu, CopyDirection direction, double bytes) const {
  sg4::Host* device = platform_.gpu_host(gpu);
  sg4::Host* host = platform_.host_endpoint(platform_.graph().node_of_gpu(gpu));
  return direction == CopyDirection::kHostToDevice ? sg4::Comm::sendto_async(host, device, wire_bytes(bytes))
                                                   : sg4::Comm::sendto_async(device, host, wire_bytes(bytes));
}

void FlowRunner::host_copies(const std::vector<int>& gpus, CopyDirection direction, double bytes) const {
  std::vector<sg4::CommPtr> comms;
  comms.reserve(gpus.size());
  simgrid::kernel::actor::simcall_answered([&] {
    for (const int gpu : gpus) comms.push_back(start_host_copy(gpu, direction, bytes));
  });
  sg4::Comm::wait_all(comms);
  if (load_ == nullptr) return;
  for (size_t i = 0; i < gpus.size(); ++i) {
    load_->add_host_copy(gpus[i], direction == CopyDirection::kDeviceToHost, bytes,
                         comms[i]->get_start_time(), comms[i]->get_finish_time());
  }
}

std::vector<double> run_sequentially(sg4::Engine& engine, const platform::Platform& platform,
                                     const std::vector<CollectiveSchedule>& schedules) {
  std::set<int> participants;
  for (const CollectiveSchedule& s : schedules) participants.insert(s.members.begin(), s.members.end());
  std::vector<ScheduleIndex> indices;
  indices.reserve(schedules.size());
  for (const CollectiveSchedule& s : schedules) indices.emplace_back(s);

  std::vector<double> ends(schedules.size(), 0);
  const FlowRunner runner(platform);
  const sg4::BarrierPtr barrier = sg4::Barrier::create(static_cast<unsigned>(participants.size()));
  const int first = participants.empty() ? -1 : *participants.begin();
  for (const int gpu : participants) {
    sg4::Actor::create(fmt::format("rank{}", gpu), platform.gpu_host(gpu), [&, gpu] {
      for (size_t s = 0; s < indices.size(); ++s) {
        runner.run_member(indices[s], gpu, 0);
        barrier->wait();
        if (gpu == first) ends[s] = sg4::Engine::get_clock();
      }
    });
  }
  engine.run();
  std::vector<double> durations;
  for (size_t s = 0; s < ends.size(); ++s) durations.push_back(ends[s] - (s == 0 ? 0.0 : ends[s - 1]));
  return durations;
}

}  // namespace trainsim::cost
