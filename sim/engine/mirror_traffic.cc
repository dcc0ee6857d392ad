#include "sim/engine/mirror_traffic.h"

#include <algorithm>

#include "sim/workload/mirrors.h"
#include "sim/workload/renaming.h"

namespace trainsim::engine {
namespace {

using workload::Op;
using workload::OpKind;

// Appends `mirror` to the list of `into` its step says.
template <class T, class U>
void add(Mirrored<T>& into, const workload::Mirror<U>& mirror, T value) {
  (mirror.in_step ? into.in_step : into.others).push_back(std::move(value));
}

// Keeps the mirrors of each `others` list of `table`, in key order, that `keep` selects from position
// `next` on.
template <class Table>
void keep_selected_others(Table& table, const std::vector<bool>& keep, size_t& next) {
  for (auto& [key, mirrored] : table) {
    auto& list = mirrored.others;
    size_t kept = 0;
    for (size_t i = 0; i < list.size(); ++i) {
      if (!keep[next++]) continue;
      if (kept != i) list[kept] = std::move(list[i]);
      ++kept;
    }
    list.resize(kept);
  }
}

// The entry of `key` in `table`, or an empty one.
template <class Table, class Key>
const typename Table::mapped_type& find_or_none(const Table& table, const Key& key) {
  static const typename Table::mapped_type none;
  const auto it = table.find(key);
  return it == table.end() ? none : it->second;
}

}  // namespace

MirrorTraffic::MirrorTraffic(const std::vector<Job>& jobs, Transport& transport, MirrorMode mode) {
  if (mode == MirrorMode::kNone) return;
  // The mirrors in step are always played (the simulated ranks wait for them, so their own
  // collisions count even where they share no link with the simulated traffic); the others where
  // they may share a link with what is played.
  std::vector<Traffic> played;
  for (size_t j = 0; j < jobs.size(); ++j) collect(j, jobs[j], played);
  const std::vector<Traffic> in_step = traffic(true);
  const std::vector<Traffic> others = traffic(false);
  candidates_ = in_step.size() + others.size();
  played.insert(played.end(), in_step.begin(), in_step.end());
  const std::vector<bool> keep =
      mode == MirrorMode::kAll ? std::vector<bool>(others.size(), true) : transport.coupled(played, others);
  size_t next = 0;
  keep_selected_others(collectives_, keep, next);
  keep_selected_others(sends_, keep, next);
  keep_selected_others(copies_, keep, next);
  played_ = in_step.size() + static_cast<size_t>(std::count(keep.begin(), keep.end(), true));
}

void MirrorTraffic::collect(size_t j, const Job& job, std::vector<Traffic>& simulated) {
  const workload::ParallelPlan& plan = *job.plan;
  if (static_cast<int64_t>(job.ranks.size()) == plan.world_size()) return;
  const workload::Mirrors mirrors(plan);
  const auto gpus_of = [&](const std::vector<int64_t>& ranks) {
    Gpus gpus;
    gpus.reserve(ranks.size());
    for (const int64_t r : ranks) gpus.push_back(job.gpu_of(r));
    return gpus;
  };
  for (size_t i = 0; i < job.ranks.size(); ++i) {
    const int64_t rank = job.ranks[i];
    const workload::Graph& graph = *job.graphs[i];
    const workload::Renaming renaming(plan, graph.info.rank, rank);
    for (workload::OpId id = 0; id < graph.size(); ++id) {
      const Op& op = graph.op(id);
      if (op.kind == OpKind::kCollective) {
        const workload::GroupId g = renaming.group(op.collective.group);
        const CollectiveKey key{j, static_cast<int>(g.kind), g.index, static_cast<int>(op.collective.kind),
                                op.bytes};
        if (collectives_.contains(key)) continue;
        Mirrored<Gpus>& entry = collectives_[key];
        simulated.push_back(
            {Traffic::Kind::kCollective, op.collective.kind, {}, gpus_of(plan.members(g)), op.bytes});
        for (const auto& twin : mirrors.groups(rank, g.kind)) {
          add(entry, twin, gpus_of(plan.members(twin.of)));
        }
      } else if (op.kind == OpKind::kSend) {
        const int64_t peer = renaming.peer(op.p2p.peer);
        const SendKey key{j, rank, peer, op.bytes};
        if (sends_.contains(key)) continue;
        Mirrored<GpuPair>& entry = sends_[key];
        simulated.push_back({Traffic::Kind::kSend, {}, {}, {job.gpu_of(rank), job.gpu_of(peer)}, op.bytes});
        for (const auto& twin : mirrors.sends(rank, peer)) {
          add(entry, twin, GpuPair{job.gpu_of(twin.of.src), job.gpu_of(twin.of.dst)});
        }
      } else if (op.kind == OpKind::kCopy) {
        const CopyKey key{j, rank, static_cast<int>(op.copy.direction), op.bytes};
        if (copies_.contains(key)) continue;
        Mirrored<int64_t>& entry = copies_[key];
        simulated.push_back({Traffic::Kind::kCopy, {}, op.copy.direction, {job.gpu_of(rank)}, op.bytes});
        for (const auto& twin : mirrors.ranks(rank)) add(entry, twin, job.gpu_of(twin.of));
      }
    }
  }
}

std::vector<Traffic> MirrorTraffic::traffic(bool in_step) const {
  const auto list_of = [in_step](const auto& mirrored) -> const auto& {
    return in_step ? mirrored.in_step : mirrored.others;
  };
  std::vector<Traffic> out;
  for (const auto& [key, mirrored] : collectives_) {
    const auto kind = static_cast<workload::CollectiveKind>(std::get<3>(key));
    for (const Gpus& gpus : list_of(mirrored)) {
      out.push_back({Traffic::Kind::kCollective, kind, {}, gpus, std::get<4>(key)});
    }
  }
  for (const auto& [key, mirrored] : sends_) {
    for (const auto& [src, dst] : list_of(mirrored)) {
      out.push_back({Traffic::Kind::kSend, {}, {}, {src, dst}, std::get<3>(key)});
    }
  }
  for (const auto& [key, mirrored] : copies_) {
    const auto direction = static_cast<workload::CopyDirection>(std::get<2>(key));
    for (const int64_t gpu : list_of(mirrored)) {
      out.push_back({Traffic::Kind::kCopy, {}, direction, {gpu}, std::get<3>(key)});
    }
  }
  return out;
}

const Mirrored<MirrorTraffic::Gpus>& MirrorTraffic::collectives(size_t job, workload::GroupId g,
                                                                const workload::Op& op) const {
  return find_or_none(collectives_, CollectiveKey{job, static_cast<int>(g.kind), g.index,
                                                  static_cast<int>(op.collective.kind), op.bytes});
}

const Mirrored<MirrorTraffic::GpuPair>& MirrorTraffic::sends(size_t job, int64_t src, int64_t dst,
                                                             double bytes) const {
  return find_or_none(sends_, SendKey{job, src, dst, bytes});
}

const Mirrored<int64_t>& MirrorTraffic::copies(size_t job, int64_t rank, const workload::Op& op) const {
  return find_or_none(copies_, CopyKey{job, rank, static_cast<int>(op.copy.direction), op.bytes});
}

}  // namespace trainsim::engine
