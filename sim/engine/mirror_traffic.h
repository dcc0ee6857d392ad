// Internal to sim/engine: the traffic a collapsed run plays for the ranks it does not simulate
// (workload/mirrors.h), looked up by the simulated op it mirrors. Built once, before the simulation.
#ifndef TRAINSIM_SIM_ENGINE_MIRROR_TRAFFIC_H_
#define TRAINSIM_SIM_ENGINE_MIRROR_TRAFFIC_H_

#include <cstdint>
#include <map>
#include <tuple>
#include <utility>
#include <vector>

#include "sim/engine/engine.h"
#include "sim/engine/transport.h"
#include "sim/workload/graph.h"

namespace trainsim::engine {

// The mirrors of one simulated communication, on the transport's GPUs: those whose ranks are in
// step with the simulated rank (workload/mirrors.h), which it waits for, and the others.
template <class T>
struct Mirrored {
  std::vector<T> in_step;
  std::vector<T> others;
};

class MirrorTraffic {
 public:
  using Gpus = std::vector<int64_t>;
  using GpuPair = std::pair<int64_t, int64_t>;

  // The mirrors of every collective, send and copy of each job's simulated ranks: all of them with
  // MirrorMode::kAll; with kCoupled, those in step and those transport.coupled() couples to the
  // simulated traffic or them; none with kNone. A job that simulates every rank has none. Call after
  // transport.build_platform().
  MirrorTraffic(const std::vector<Job>& jobs, Transport& transport, MirrorMode mode);

  // The member GPUs of each group that mirrors collective `op` of a simulated rank of job `job`, which
  // runs it on `group` (the op's, renamed for the rank).
  const Mirrored<Gpus>& collectives(size_t job, workload::GroupId group, const workload::Op& op) const;
  // The (source, destination) GPUs of each send that mirrors rank `src`'s send of `bytes` to `dst`.
  const Mirrored<GpuPair>& sends(size_t job, int64_t src, int64_t dst, double bytes) const;
  // The GPUs whose copies mirror copy `op` of rank `rank`.
  const Mirrored<int64_t>& copies(size_t job, int64_t rank, const workload::Op& op) const;

  // How many mirrored communications there are, and how many of them are played.
  size_t candidates() const { return candidates_; }
  size_t played() const { return played_; }

 private:
  // (job, group kind, group index, collective kind, bytes)
  using CollectiveKey = std::tuple<size_t, int, int32_t, int, double>;
  // (job, source rank, destination rank, bytes)
  using SendKey = std::tuple<size_t, int64_t, int64_t, double>;
  // (job, rank, direction, bytes)
  using CopyKey = std::tuple<size_t, int64_t, int, double>;

  // Collects the mirrors of job `j`'s simulated ops into the tables, and the simulated traffic they
  // mirror into `simulated`.
  void collect(size_t j, const Job& job, std::vector<Traffic>& simulated);
  // The in-step or the other mirrors of every table as traffic: collectives, sends, copies, each
  // table in key order.
  std::vector<Traffic> traffic(bool in_step) const;

  std::map<CollectiveKey, Mirrored<Gpus>> collectives_;
  std::map<SendKey, Mirrored<GpuPair>> sends_;
  std::map<CopyKey, Mirrored<int64_t>> copies_;
  size_t candidates_ = 0;
  size_t played_ = 0;
};

}  // namespace trainsim::engine

#endif  // TRAINSIM_SIM_ENGINE_MIRROR_TRAFFIC_H_
