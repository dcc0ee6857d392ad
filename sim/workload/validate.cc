#include "sim/workload/validate.h"

#include <algorithm>
#include <map>
#include <tuple>

#include <fmt/format.h>

#include "sim/workload/renaming.h"

namespace trainsim::workload {
namespace {

struct Problems {
  std::vector<std::string> list;
  template <class... Args>
  void add(fmt::format_string<Args...> format, Args&&... args) {
    if (list.size() < kMaxProblems) list.push_back(fmt::format(format, std::forward<Args>(args)...));
  }
};

using P2pKey = std::tuple<int64_t, int64_t, int64_t>;  // sender, receiver, tag

}  // namespace

std::vector<std::string> check_graph(const ParallelPlan& plan, const Graph& graph) {
  Problems p;
  const int64_t rank = graph.info.rank;
  std::vector<int8_t> state(static_cast<size_t>(graph.info.buffers), 0);  // 0 never, 1 live, 2 freed
  std::vector<double> size(state.size(), 0);
  std::vector<OpId> allocated_at(state.size(), kNoOp);
  std::map<std::pair<int, int32_t>, int32_t> next_seq;
  for (OpId id = 0; id < graph.size(); ++id) {
    const Op& op = graph.op(id);
    for (OpId pred : graph.predecessors(id)) {
      if (pred >= id) p.add("rank {}: op {} ({}) depends on later op {}", rank, id, op_name(op), pred);
    }
    switch (op.kind) {
      case OpKind::kAlloc:
      case OpKind::kFree: {
        const BufferId b = op.buffer.buffer;
        if (b < 0 || static_cast<size_t>(b) >= state.size()) {
          p.add("rank {}: op {} names buffer {} of {}", rank, id, b, state.size());
          break;
        }
        if (op.kind == OpKind::kAlloc) {
          if (state[b] != 0) p.add("rank {}: buffer {} allocated twice (op {})", rank, b, id);
          state[b] = 1;
          size[b] = op.bytes;
          allocated_at[b] = id;
        } else {
          if (state[b] != 1) p.add("rank {}: buffer {} freed while not live (op {})", rank, b, id);
          if (state[b] == 1 && size[b] != op.bytes) {
            p.add("rank {}: buffer {} allocated with {} bytes, freed with {}", rank, b, size[b], op.bytes);
          }
          state[b] = 2;
        }
        break;
      }
      case OpKind::kCollective: {
        const CollectiveCall& c = op.collective;
        if (c.group.index < 0 || c.group.index >= plan.group_count(c.group.kind)) {
          p.add("rank {}: op {} names {} group {}", rank, id, to_string(c.group.kind), c.group.index);
          break;
        }
        if (!(plan.group_of(rank, c.group.kind) == c.group)) {
          p.add("rank {}: op {} uses a {} group it is not in", rank, id, to_string(c.group.kind));
        }
        int32_t& expected = next_seq[{static_cast<int>(c.group.kind), c.group.index}];
        if (c.seq != expected)
          p.add("rank {}: op {} has sequence {} on its group, expected {}", rank, id, c.seq, expected);
        expected = c.seq + 1;
        break;
      }
      case OpKind::kSend:
      case OpKind::kRecv:
        if (op.p2p.peer < 0 || op.p2p.peer >= plan.world_size() || op.p2p.peer == rank) {
          p.add("rank {}: op {} has peer {}", rank, id, op.p2p.peer);
        }
        break;
      case OpKind::kGemm:  // kernels, copies and orderings name no group, peer or buffer
      case OpKind::kAttentionForward:
      case OpKind::kAttentionBackward:
      case OpKind::kMemory:
      case OpKind::kOptimizerStep:
      case OpKind::kCopy:
      case OpKind::kHostSync:
      case OpKind::kStreamWait:
        break;
    }
  }
  for (size_t b = 0; b < state.size(); ++b) {
    if (state[b] != 2)
      p.add("rank {}: buffer {} (allocated by op {}) is never freed", rank, b, allocated_at[b]);
  }
  return p.list;
}

std::vector<std::string> check_matching(const ParallelPlan& plan, const std::vector<Graph>& graphs) {
  Problems p;
  if (static_cast<int64_t>(graphs.size()) != plan.world_size()) {
    p.add("{} graphs for {} ranks", graphs.size(), plan.world_size());
    return p.list;
  }
  std::map<P2pKey, std::pair<double, int>> sends, recvs;  // bytes, count
  // (group kind, group index, seq) -> (kind, bytes, entries)
  std::map<std::tuple<int, int32_t, int32_t>, std::tuple<int, double, int64_t>> collectives;
  for (const Graph& g : graphs) {
    const int64_t rank = g.info.rank;
    for (const Op& op : g.ops()) {
      if (op.kind == OpKind::kSend || op.kind == OpKind::kRecv) {
        const bool send = op.kind == OpKind::kSend;
        const P2pKey key =
            send ? P2pKey{rank, op.p2p.peer, op.p2p.tag} : P2pKey{op.p2p.peer, rank, op.p2p.tag};
        auto& entry = (send ? sends : recvs)[key];
        if (entry.second > 0 && entry.first != op.bytes)
          p.add("p2p {}->{} tag {:#x}: sizes differ", std::get<0>(key), std::get<1>(key), op.p2p.tag);
        entry = {op.bytes, entry.second + 1};
      } else if (op.kind == OpKind::kCollective) {
        const CollectiveCall& c = op.collective;
        auto [it, inserted] = collectives.try_emplace({static_cast<int>(c.group.kind), c.group.index, c.seq},
                                                      static_cast<int>(c.kind), op.bytes, 0);
        auto& [kind, bytes, count] = it->second;
        if (kind != static_cast<int>(c.kind) || bytes != op.bytes) {
          p.add("{} group {} collective #{}: rank {} enters {} of {} bytes, others {} of {} bytes",
                to_string(c.group.kind), c.group.index, c.seq, rank, to_string(c.kind), op.bytes,
                to_string(static_cast<CollectiveKind>(kind)), bytes);
        }
        ++count;
      }
    }
  }
  for (const auto& [key, s] : sends) {
    const auto it = recvs.find(key);
    if (s.second != 1)
      p.add("p2p {}->{} tag {:#x} sent {} times", std::get<0>(key), std::get<1>(key), std::get<2>(key),
            s.second);
    if (it == recvs.end()) {
      p.add("send {}->{} tag {:#x} has no receive", std::get<0>(key), std::get<1>(key), std::get<2>(key));
    } else if (it->second.first != s.first || it->second.second != 1) {
      p.add("p2p {}->{} tag {:#x}: {} bytes sent, {} received ({}x)", std::get<0>(key), std::get<1>(key),
            std::get<2>(key), s.first, it->second.first, it->second.second);
    }
  }
  for (const auto& [key, r] : recvs) {
    if (!sends.contains(key))
      p.add("receive {}->{} tag {:#x} has no send", std::get<0>(key), std::get<1>(key), std::get<2>(key));
  }
  for (const auto& [key, value] : collectives) {
    const auto kind = static_cast<GroupKind>(std::get<0>(key));
    if (std::get<2>(value) != plan.group_size(kind)) {
      p.add("{} group {} collective #{} entered by {} of {} members", to_string(kind), std::get<1>(key),
            std::get<2>(key), std::get<2>(value), plan.group_size(kind));
    }
  }
  return p.list;
}

std::vector<std::string> check_class_matching(const ParallelPlan& plan,
                                              const std::vector<Graph>& class_graphs) {
  Problems p;
  // Per class and group kind: the sequence of (kind, bytes) collectives.
  using Sequence = std::vector<std::pair<int, double>>;
  std::vector<std::array<Sequence, kGroupKindCount>> sequences(class_graphs.size());
  // Per class: sends of its graph by (peer, tag) -> bytes.
  std::vector<std::map<std::pair<int64_t, int64_t>, double>> sends(class_graphs.size());
  for (size_t c = 0; c < class_graphs.size(); ++c) {
    const Graph& g = class_graphs[c];
    for (const Op& op : g.ops()) {
      if (op.kind == OpKind::kCollective) {
        sequences[c][static_cast<int>(op.collective.group.kind)].push_back(
            {static_cast<int>(op.collective.kind), op.bytes});
      } else if (op.kind == OpKind::kSend) {
        sends[c][{op.p2p.peer, op.p2p.tag}] = op.bytes;
      }
    }
  }
  for (size_t c = 0; c < class_graphs.size(); ++c) {
    const Graph& g = class_graphs[c];
    const int64_t rank = g.info.rank;
    for (int k = 0; k < kGroupKindCount; ++k) {
      if (sequences[c][k].empty()) continue;
      const GroupKind kind = static_cast<GroupKind>(k);
      for (int64_t member : plan.members(plan.group_of(rank, kind))) {
        const int32_t mc = plan.class_of(member);
        if (sequences[mc][k] != sequences[c][k]) {
          p.add("class {} and class {} (rank {}) enter different collectives on their {} group", c, mc,
                member, to_string(kind));
        }
      }
    }
    for (const Op& op : g.ops()) {
      if (op.kind != OpKind::kRecv) continue;
      const int64_t sender = op.p2p.peer;
      const int32_t sc = plan.class_of(sender);
      const int64_t representative = class_graphs[sc].info.rank;
      // The sender runs its class graph renamed: its send to `rank` is the graph's send to the rank
      // that stands to the graph's rank as `rank` stands to the sender.
      const int64_t peer_in_graph = Renaming(plan, sender, representative).peer(rank);
      const auto it = sends[sc].find({peer_in_graph, op.p2p.tag});
      if (it == sends[sc].end()) {
        p.add("rank {} receives tag {:#x} from rank {}, which never sends it", rank, op.p2p.tag, sender);
      } else if (it->second != op.bytes) {
        p.add("rank {} receives {} bytes with tag {:#x} from rank {}, which sends {}", rank, op.bytes,
              op.p2p.tag, sender, it->second);
      }
    }
  }
  return p.list;
}

std::string check_equivalent(const ParallelPlan& plan, const Graph& a, const Graph& b) {
  if (plan.class_of(a.info.rank) != plan.class_of(b.info.rank)) {
    return fmt::format("ranks {} and {} are in different classes", a.info.rank, b.info.rank);
  }
  if (a.size() != b.size()) return fmt::format("{} ops vs {}", a.size(), b.size());
  const Renaming a_as_b(plan, a.info.rank, b.info.rank);
  for (OpId id = 0; id < a.size(); ++id) {
    const Op& x = a.op(id);
    const Op& y = b.op(id);
    const auto differ = [&](const char* what) {
      return fmt::format("op {} ({}): {} differs", id, op_name(x), what);
    };
    if (x.kind != y.kind || x.stream != y.stream || x.phase != y.phase || x.label != y.label)
      return differ("kind");
    if (x.layer != y.layer || x.micro_batch != y.micro_batch || x.index != y.index) return differ("position");
    if (x.flops != y.flops || x.model_flops != y.model_flops || x.bytes != y.bytes) return differ("size");
    const auto pa = a.predecessors(id), pb = b.predecessors(id);
    if (!std::equal(pa.begin(), pa.end(), pb.begin(), pb.end())) return differ("dependencies");
    switch (x.kind) {
      case OpKind::kGemm:
        if (x.gemm.m != y.gemm.m || x.gemm.n != y.gemm.n || x.gemm.k != y.gemm.k ||
            x.gemm.pass != y.gemm.pass || x.gemm.groups != y.gemm.groups) {
          return differ("shape");
        }
        break;
      case OpKind::kAttentionForward:
      case OpKind::kAttentionBackward: {
        const AttentionShape &s = x.attention, &t = y.attention;
        if (s.batch != t.batch || s.heads != t.heads || s.kv_heads != t.kv_heads || s.q_len != t.q_len ||
            s.kv_len != t.kv_len || s.head_dim != t.head_dim || s.value_dim != t.value_dim ||
            s.causal != t.causal || s.fused != t.fused || s.dropout != t.dropout) {
          return differ("shape");
        }
        break;
      }
      case OpKind::kCollective:
        if (x.collective.kind != y.collective.kind || x.collective.group.kind != y.collective.group.kind ||
            x.collective.seq != y.collective.seq) {
          return differ("collective");
        }
        break;
      case OpKind::kSend:
      case OpKind::kRecv:
        if (x.p2p.tag != y.p2p.tag || a_as_b.peer(x.p2p.peer) != y.p2p.peer) {
          return differ("peer");
        }
        break;
      case OpKind::kCopy:
        if (x.copy.direction != y.copy.direction) return differ("direction");
        break;
      case OpKind::kAlloc:
      case OpKind::kFree:
        if (x.buffer.buffer != y.buffer.buffer || x.buffer.space != y.buffer.space ||
            x.buffer.category != y.buffer.category) {
          return differ("buffer");
        }
        break;
      case OpKind::kMemory:  // no fields beyond those compared for every op
      case OpKind::kOptimizerStep:
      case OpKind::kHostSync:
      case OpKind::kStreamWait:
        break;
    }
  }
  return "";
}

}  // namespace trainsim::workload
